#include "orchestrator/app/images/images_push.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>

#include "orchestrator/app/images/images.hpp"
#include "orchestrator/app/images/images_detail.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/engine/docker.hpp"
#include "orchestrator/engine/image_spool.hpp"
#include "orchestrator/registry/layout.hpp"
#include "orchestrator/registry/protocol.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/byte_pipe.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using util::ExitCode;
using util::Failure;

namespace {

constexpr std::string_view k_image_config = "application/vnd.oci.image.config.v1+json";
constexpr std::string_view k_layer_tar = "application/vnd.oci.image.layer.v1.tar";
constexpr std::string_view k_layer_gzip = "application/vnd.oci.image.layer.v1.tar+gzip";
constexpr std::uint64_t k_max_json = 8 << 20;

// "orchestrate/cuda:12.4-trixie" -> {"orchestrate/cuda", "12.4-trixie"}: a
// recorded image's repository and its tag ("latest" when it has none).
std::pair<std::string, std::string> split_reference(std::string_view reference) {
  auto parsed = digest::ImageReference::parse(reference);
  if (!parsed) util::fail_input(parsed.error());
  return {parsed->repository(), parsed->tag_or_latest()};
}

std::string trimmed(std::string_view url) {
  std::string out(url);
  while (out.ends_with('/')) out.pop_back();
  return out;
}

// A layer as the archive holds it: a tar, or (the containerd image store's
// archives) a compressed one.
std::string layer_media_type(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return std::string(magic[0] == 0x1f && magic[1] == 0x8b ? k_layer_gzip : k_layer_tar);
}

// Removes a tree when it goes.
struct Removed {
  fs::path path;
  ~Removed() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct Spooled {
  registry::Manifest manifest;
  std::vector<fs::path> files;  // config, then the layers
};

// The image from the engine into `dir`: its config and layers, described.
Spooled spool_image(engine::DockerClient& engine, const site::ImageRecord& record, const fs::path& dir) {
  util::BytePipe pipe;
  util::PipeProducer exporter(pipe, [&]() -> std::optional<std::string> {
    net::CallbackSink sink([&](std::string_view bytes) { return pipe.write(bytes); });
    auto done = engine.export_image(record.id, sink);
    if (!done) return done.error().message;
    return std::nullopt;
  });
  auto spooled = engine::spool_image_archive([&](std::span<std::byte> out) { return pipe.read(out); }, dir);
  if (spooled) pipe.drain();
  const std::optional<std::string> export_error = exporter.join();
  const std::string what = "exporting " + record.reference + " from the engine";
  if (export_error) throw Failure(ExitCode::outside_failure, what + ": " + *export_error);
  if (!spooled) throw Failure(ExitCode::outside_failure, what + ": " + spooled.error().message);

  const auto entry = [&](const std::string& name) -> const engine::SpooledEntry& {
    for (const auto& e : *spooled)
      if (e.name == name) return e;
    throw Failure(ExitCode::outside_failure, what + ": the archive lacks " + name);
  };
  const auto& listed = entry("manifest.json");
  if (listed.size > k_max_json) throw Failure(ExitCode::outside_failure, what + ": manifest.json is too large");
  auto text = cache::read_file(listed.path);
  if (!text) throw Failure(ExitCode::outside_failure, text.error().message);
  const auto manifest = nlohmann::json::parse(*text, nullptr, false);
  if (!manifest.is_array() || manifest.size() != 1 || !manifest[0].is_object() || !manifest[0].contains("Config") ||
      !manifest[0]["Config"].is_string() || !manifest[0].contains("Layers") || !manifest[0]["Layers"].is_array())
    throw Failure(ExitCode::outside_failure, what + ": manifest.json does not describe one image");
  Spooled out;
  const auto& config = entry(manifest[0]["Config"].get<std::string>());
  // The engine's image ID is its config's digest: the very image recorded.
  if (config.digest.to_string() != record.id)
    throw Failure(ExitCode::outside_failure,
                  what + ": its config is " + config.digest.to_string() + ", not the recorded image " + record.id);
  out.manifest.config = {.media_type = std::string(k_image_config), .digest = config.digest, .size = config.size};
  out.files.push_back(config.path);
  for (const auto& name : manifest[0]["Layers"]) {
    if (!name.is_string()) throw Failure(ExitCode::outside_failure, what + ": manifest.json names a layer oddly");
    const auto& layer = entry(name.get<std::string>());
    out.manifest.layers.push_back(
        {.media_type = layer_media_type(layer.path), .digest = layer.digest, .size = layer.size});
    out.files.push_back(layer.path);
  }
  return out;
}

const site::ImageRecord& find_record(const std::vector<site::ImageRecord>& records, const std::string& name) {
  const compat::OfflineImage* image = compat::find_offline_image(name);
  const std::string wanted = image ? image->reference() : name;
  for (const auto& r : records)
    if (r.reference == wanted || r.name == name) return r;
  if (!image) {
    std::vector<std::string> names;
    for (const auto& i : compat::offline_images()) names.emplace_back(i.name);
    throw Failure(ExitCode::bad_input, {util::Diagnostic{.message = "no image '" + name + "' in the catalog",
                                                         .suggestion = util::did_you_mean(name, names)}});
  }
  throw Failure(ExitCode::bad_input, "image " + wanted + " is not built here: run `orchestrate images build " +
                                         std::string(image->name) + "`, then push it");
}

PushedImage push_one(engine::DockerClient& engine, const site::ImageRecord& record, const std::string& remote_url,
                     std::ostream& progress) {
  const auto [repository, tag] = split_reference(record.reference);
  PushedImage out{.name = record.name, .reference = record.reference};
  const std::string target = pushed_repository(remote_url, record.reference);
  auto client = site::make_client(trimmed(remote_url) + "/" + repository);
  const std::string doing = "pushing " + record.reference + " to " + client->display_url();
  const auto failed = [&](const registry::Error& e) -> Failure {
    return Failure(site::exit_code_for(e), doing + ": " + e.message);
  };

  // Recorded as pushed here, and the remote still has it: nothing to do.
  if (record.pushed.starts_with(target + "@")) {
    const std::string digest = record.pushed.substr(target.size() + 1);
    auto there = client->get_manifest(digest);
    if (there) {
      out.pushed = record.pushed;
      out.up_to_date = true;
      return out;
    }
    if (there.error().kind != registry::ErrorKind::not_found) throw failed(there.error());
  }

  auto info = engine.inspect_image(record.reference);
  if (!info)
    throw Failure(info.error().kind == engine::ErrorKind::not_found ? ExitCode::bad_input : ExitCode::outside_failure,
                  "the engine has no " + record.reference + " (" + info.error().message +
                      "): run `orchestrate images build " + record.name + "`");
  if (info->id != record.id)
    throw Failure(ExitCode::bad_input, "the engine's " + record.reference + " is " + info->id +
                                           ", not the image built here (" + record.id +
                                           "): run `orchestrate images build " + record.name + "`");

  const Removed spool{cache::temp_name(cache_root() / "tmp", "image-push")};
  progress << "orchestrate: reading " << record.reference << " from the engine\n" << std::flush;
  Spooled image = spool_image(engine, record, spool.path);
  for (std::size_t i = 0; i < image.files.size(); ++i) {
    const registry::Descriptor& d = i == 0 ? image.manifest.config : image.manifest.layers[i - 1];
    out.bytes += d.size;
    if (i > 0)
      progress << "orchestrate: layer " << d.digest.short_string(12) << " (" << d.size / (1 << 20) << " MiB)\n"
               << std::flush;
    auto pushed = client->push_blob(d.digest, image.files[i]);
    if (!pushed) throw failed(pushed.error());
    ++(pushed->uploaded ? out.uploaded : out.skipped);
  }
  image.manifest.media_type = std::string(registry::k_oci_manifest);
  const std::string body = registry::image_manifest(image.manifest);
  auto put = client->put_manifest(tag, registry::k_oci_manifest, body);
  if (!put) throw failed(put.error());
  out.pushed = target + "@" + put->digest.to_string();
  return out;
}

}  // namespace

std::string pushed_repository(std::string_view remote_url, std::string_view reference) {
  auto remote = registry::parse_remote(remote_url);
  if (!remote) util::fail_input("remote: " + remote.error().message);
  std::string host = remote->origin;
  for (std::string_view scheme : {"https://", "http://"})
    if (host.starts_with(scheme)) host.erase(0, scheme.size());
  const std::string repository = remote->repository + "/" + split_reference(reference).first;
  if (!digest::is_valid_repository(repository))
    util::fail_input("'" + repository + "' is not a valid repository name for " + std::string(reference));
  return host + "/" + repository;
}

ImagePushReport push_images(const ImagePushRequest& request, std::ostream& progress) {
  if (request.names.empty() && !request.all) util::fail_input("name an image to push, or give --all");
  const auto config = site::load_config_file(request.config, false);
  const auto remote = site::choose_remote(util::env_value("ORCHESTRATE_REMOTE").c_str(), config ? &*config : nullptr);
  if (!remote)
    util::fail_input("images push needs a remote: set ORCHESTRATE_REMOTE or 'remote:' in " +
                     (config ? config->file.string() : request.config.string()));
  const fs::path state = request.state_file.value_or(site::image_state_path());
  const std::vector<site::ImageRecord> records = site::read_image_state(state);
  std::vector<site::ImageRecord> chosen;
  if (request.all) chosen = records;
  for (const auto& name : request.names) chosen.push_back(find_record(records, name));
  if (chosen.empty())
    util::fail_input("no image is recorded as built in " + state.string() + ": run `orchestrate images build NAME`");

  auto socket = images_detail::engine_socket(request.engine_socket);
  if (!socket) throw Failure(ExitCode::outside_failure, socket.error());
  auto engine = engine::DockerClient::connect(engine::make_unix_socket_transport(*socket));
  if (!engine)
    throw Failure(ExitCode::outside_failure,
                  "cannot reach the engine at " + socket->string() + ": " + engine.error().message);
  ImagePushReport report{.remote = site::display_remote(remote->url)};
  for (site::ImageRecord& record : chosen) {
    PushedImage pushed = push_one(*engine, record, remote->url, progress);
    if (record.pushed != pushed.pushed) {
      record.pushed = pushed.pushed;
      site::save_image_record(state, record);
    }
    report.images.push_back(std::move(pushed));
  }
  return report;
}

}  // namespace orc::app
