#include "orchestrator/app/stamp/stamp.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "orchestrator/arch/requirement.hpp"
#include "orchestrator/compat/driver.hpp"
#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/docker.hpp"
#include "orchestrator/engine/image_archive.hpp"
#include "orchestrator/registry/layout.hpp"
#include "orchestrator/registry/protocol.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/byte_pipe.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

using util::ExitCode;
using util::Failure;

namespace {

void leaves(const inspect::FileReport& r, std::vector<const inspect::FileReport*>& out) {
  out.push_back(&r);
  for (const auto& m : r.members) leaves(m, out);
}

std::string default_tag(const ImageSource& source, const std::string& tier) {
  // repo:tag -> repo:tag-tier; a digest has no tag to extend.
  const bool by_digest = source.image ? source.image->digest().has_value() : source.reference.starts_with("sha256:");
  if (by_digest)
    throw Failure(ExitCode::bad_input, source.given + " is named by digest: give the stamped image's tag with --tag");
  return (source.image ? source.image->tag_or_latest() : std::string("latest")) + "-" + tier;
}

// The repository of a local reference: "repo:tag", "repo@sha256:..." and
// "repo:tag@sha256:..." all give "repo". An image ID names no repository.
std::string repo_of(const ImageSource& source) {
  const std::string_view name = std::string_view(source.reference).substr(0, source.reference.find('@'));
  const bool hex_id =
      name.size() >= 12 && name.size() <= 64 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (hex_id || name.starts_with("sha256:"))
    throw Failure(ExitCode::bad_input, source.given + " is an image ID, which names no repository for the stamped "
                                                      "image: name it docker://REPO:TAG or docker://REPO@sha256:...");
  if (!source.image)
    throw Failure(ExitCode::bad_input, digest::ImageReference::parse(source.reference).error() +
                                           ": the stamped image is named after its repository");
  return source.image->repository();
}

// The new image through the engine: its export rewritten as it streams
// into a load. Three threads: the export, the rewrite, the load (this one).
std::pair<std::string, std::string> stamp_in_engine(const ImageSource& source, const std::string& tag,
                                                    const engine::ConfigEdit& edit) {
  const auto found = engine::discover_engine(std::nullopt);
  if (!found || found->kind == engine::EngineKind::host)
    throw Failure(ExitCode::outside_failure, source.given + ": no container engine socket found; start dockerd "
                                                            "(scripts/start-dockerd.sh) or set DOCKER_HOST=unix://PATH");
  const auto connect = [&] {
    auto c = engine::DockerClient::connect(engine::make_unix_socket_transport(found->socket));
    if (!c) throw Failure(ExitCode::outside_failure, source.given + ": " + c.error().message);
    return std::move(*c);
  };
  auto exporter = connect();
  auto loader = connect();
  auto info = exporter.inspect_image(source.reference);
  if (!info)
    throw Failure(info.error().kind == engine::ErrorKind::not_found ? ExitCode::bad_input : ExitCode::outside_failure,
                  source.given + ": " + info.error().message);
  const std::string new_ref = repo_of(source) + ":" + tag;
  util::BytePipe exported, rewritten;
  // Which of the three failed first (the others fail because it did, and
  // their messages would hide its own): 1 export, 2 rewrite, 3 load.
  std::atomic<int> first_failure = 0;
  const auto failed = [&](int who) {
    int none = 0;
    first_failure.compare_exchange_strong(none, who);
  };
  std::expected<engine::Rewritten, engine::Error> result = std::unexpected(engine::Error{});
  util::PipeProducer export_thread(exported, [&]() -> std::optional<std::string> {
    net::CallbackSink sink([&](std::string_view bytes) { return exported.write(bytes); });
    auto done = exporter.export_image(info->id, sink);
    if (!done) {
      failed(1);
      return done.error().message;
    }
    return std::nullopt;
  });
  std::thread rewrite_thread([&] {
    result = engine::rewrite_image_archive([&](std::span<std::byte> out) { return exported.read(out); },
                                           [&](std::string_view bytes) { return rewritten.write(bytes); }, edit,
                                           new_ref);
    if (!result) {
      failed(2);
      exported.abandon();
    } else {
      exported.drain();  // what follows the archive's end blocks, so the export ends
    }
    rewritten.close(result ? std::nullopt : std::optional<std::string>(result.error().message));
  });
  net::StreamedBody body{
      .source = [&](std::span<char> out) {
        return rewritten.read(std::as_writable_bytes(out));
      },
      .size = std::nullopt};
  auto loaded = loader.load_image(std::move(body));
  if (!loaded) failed(3);
  rewritten.abandon();
  // The rewrite ends first (it drains or abandons the export's pipe), then
  // the export.
  rewrite_thread.join();
  const std::optional<std::string> export_error = export_thread.join();
  if (first_failure == 3) throw Failure(ExitCode::outside_failure, source.given + ": " + loaded.error().message);
  if (export_error && first_failure != 2)
    throw Failure(ExitCode::outside_failure, source.given + ": " + *export_error);
  if (!result)
    throw Failure(result.error().kind == engine::ErrorKind::invalid_spec ? ExitCode::bad_input
                                                                        : ExitCode::outside_failure,
                  source.given + ": " + result.error().message);
  if (!loaded) throw Failure(ExitCode::outside_failure, source.given + ": " + loaded.error().message);
  auto stamped = loader.inspect_image(new_ref);
  if (!stamped) throw Failure(ExitCode::outside_failure, "the engine loaded the stamped image but cannot show " + new_ref);
  if (stamped->id != result->config_digest)
    throw Failure(ExitCode::outside_failure, new_ref + " is " + stamped->id + ", not the stamped config " +
                                                 result->config_digest);
  return {new_ref, stamped->id};
}

// The manifest scanned (by its digest: a tag moved since is not stamped)
// with the new config, pushed under `tag`.
std::pair<std::string, std::string> stamp_in_registry(const ImageSource& source, const std::string& scanned,
                                                      const std::string& tag, const std::string& new_config) {
  auto client = site::make_client(source.registry);
  auto manifest = client->get_manifest(scanned);
  if (!manifest) throw Failure(site::exit_code_for(manifest.error()), source.given + ": " + manifest.error().message);
  // The bytes the scan's registry::parse_manifest took (fetched by their
  // digest), so bounded in size and depth before this parse and dump.
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(manifest->body);
  } catch (const std::exception& e) {
    throw Failure(ExitCode::outside_failure, source.given + ": the manifest is malformed: " + util::printable(e.what()));
  }
  const auto descriptor = registry::describe(doc["config"].value("mediaType", "application/vnd.oci.image.config.v1+json"),
                                             new_config);
  auto pushed = client->push_blob(descriptor.digest, new_config);
  if (!pushed) throw Failure(site::exit_code_for(pushed.error()), source.given + ": " + pushed.error().message);
  doc["config"]["digest"] = descriptor.digest.to_string();
  doc["config"]["size"] = descriptor.size;
  const std::string body = doc.dump();
  auto put = client->put_manifest(tag, manifest->media_type, body);
  if (!put) throw Failure(site::exit_code_for(put.error()), source.given + ": " + put.error().message);
  // oci://HOST/PATH or oci+http://HOST/PATH, as given, less its tag or digest.
  const std::string scheme = source.given.substr(0, source.given.find("://") + 3);
  return {scheme + source.image->with_tag(tag).to_string(), put->digest.to_string()};
}

}  // namespace

StampValues stamp_values(const std::vector<inspect::FileReport>& files, bool native_only) {
  StampValues v;
  std::vector<const inspect::FileReport*> all;
  for (const auto& f : files) leaves(f, all);
  int runtime = 0;
  for (const auto* f : all)
    if (f->runtime) runtime = std::max(runtime, f->runtime->major);
  // NVIDIA_REQUIRE_CUDA asks the runtime's major of every node; PTX that
  // needs a newer driver is asked of the GPUs that JIT-compile it only.
  const util::Version floor = runtime > 0 ? util::Version(runtime, 0) : util::Version();
  std::vector<arch::Targets> targets;
  for (const auto* f : all) {
    if (!f->members.empty() || f->entries == 0 || f->object) continue;
    // The code of the modules that hold kernels (a module known to hold
    // none launches nothing: coverage calls such a file no-kernels), and
    // the images the library loads itself, which the verdicts count too.
    // PTX by target, with the newest ISA among its images.
    std::set<arch::ComputeCapability> sass;
    std::map<arch::ComputeCapability, util::Version> ptx;
    const auto add_ptx = [&](const inspect::PtxImage& p) {
      auto& isa = ptx[p.arch];
      if (isa < p.isa) isa = p.isa;
    };
    if (f->modules.empty()) {
      sass = f->sass;
      for (const auto& p : f->ptx) ptx.try_emplace(p);
    }
    for (const auto& m : f->modules) {
      if (!m.loadable() || m.kernels == inspect::Kernels::no) continue;
      sass.insert(m.sass.begin(), m.sass.end());
      for (const auto& p : m.ptx) add_ptx(p);
    }
    const auto& rt = f->runtime_code;
    if (rt.containers > 0) {
      sass.insert(rt.sass.begin(), rt.sass.end());
      for (const auto& p : rt.ptx) add_ptx(p);
    }
    if (sass.empty() && ptx.empty()) {
      if (!rt.builders.empty()) v.unbounded.push_back(f->path);
      continue;
    }
    arch::Targets t;
    t.sass.assign(sass.begin(), sass.end());
    if (!native_only)
      for (const auto& [target, isa] : ptx) {
        t.ptx.push_back(target);
        auto cuda = compat::cuda_for_ptx_isa(isa);
        if (cuda && !floor.empty() && !(floor < *cuda)) cuda.reset();
        t.ptx_cuda.push_back(cuda);
      }
    targets.push_back(std::move(t));
  }
  if (runtime > 0) v.require_cuda = "cuda>=" + std::to_string(runtime) + ".0";
  if (!targets.empty()) {
    v.intervals = arch::runnable_on(targets);
    v.require_arch = arch::require_arch(v.intervals);
    v.runs_nowhere = v.require_arch.empty();
  }
  return v;
}

StampReport stamp(const StampRequest& given) {
  StampRequest request = given;
  std::optional<RecipeImage> from_recipe;
  if (!request.recipe.empty()) {
    if (!request.image.empty())
      throw Failure(ExitCode::bad_input, "give an IMAGE or --recipe R (the recipe's image for the tier), not both");
    from_recipe = recipe_image(request);
    request.image = from_recipe->image;
  }
  auto source = parse_image_source(request.image);
  if (!source || source->kind == ImageSourceKind::directory)
    throw Failure(ExitCode::bad_input, "'" + util::printable(request.image) +
                                           "' is no image: stamp docker://REF or oci://HOST/REPO:TAG");
  if (!request.tag.empty() && !digest::is_valid_tag(request.tag))
    throw Failure(ExitCode::bad_input, "--tag '" + util::printable(request.tag) + "' is not a valid tag");
  const std::string tag = request.tag.empty() ? default_tag(*source, request.tier) : request.tag;
  if (!digest::is_valid_tag(tag))
    throw Failure(ExitCode::bad_input, "the stamped tag '" + util::printable(tag) + "' is not valid: give --tag");
  if (source->kind == ImageSourceKind::docker) (void)repo_of(*source);  // before the scan, not after
  InspectRequest inspect;
  inspect.tiers = {request.tier};
  inspect.config = request.config;
  StampReport report;
  report.from_recipe = std::move(from_recipe);
  report.coverage = cover_image(inspect, *source);
  report.values = stamp_values(report.coverage.image.content.files, request.native_only);
  if (report.coverage.exit_code != ExitCode::ok) return report;
  if (report.values.runs_nowhere) {
    report.coverage.exit_code = ExitCode::check_failed;
    return report;
  }
  if (!report.values.require_arch.empty())
    for (const auto& t : report.coverage.tiers)
      for (const auto& gpu : t.gpus)
        if (!arch::allows(report.values.intervals, gpu.cc))
          report.values.refused_gpus.push_back((gpu.name.empty() ? "CC" : gpu.name) + " (" + gpu.cc.dotted() + ")");
  if (!report.values.refused_gpus.empty()) {
    report.coverage.exit_code = ExitCode::check_failed;
    return report;
  }
  const std::string identity = report.coverage.image.identity;
  const auto edit = [&](const std::string& config) -> std::expected<std::string, std::string> {
    auto edited = stamp_config(config, report.values, request.tier, identity);
    if (!edited) return std::unexpected(std::move(edited.error()));
    report.removed = std::move(edited->removed);
    return std::move(edited->json);
  };
  if (source->kind == ImageSourceKind::docker) {
    std::tie(report.stamped, report.identity) = stamp_in_engine(*source, tag, edit);
  } else {
    auto edited = edit(report.coverage.image.config);
    if (!edited) throw Failure(ExitCode::bad_input, source->given + ": " + edited.error() + " (nothing was pushed)");
    std::tie(report.stamped, report.identity) = stamp_in_registry(*source, identity, tag, *edited);
  }
  report.stamped_ok = true;
  return report;
}

}  // namespace orc::app
