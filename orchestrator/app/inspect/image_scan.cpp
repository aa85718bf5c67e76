#include "orchestrator/app/inspect/image_scan.hpp"

#include <atomic>
#include <chrono>
#include <climits>
#include <fstream>
#include <set>
#include <thread>

#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/docker.hpp"
#include "orchestrator/inspect/bom.hpp"
#include "orchestrator/inspect/needs.hpp"
#include "orchestrator/inspect/package.hpp"
#include "orchestrator/inspect/root_walk.hpp"
#include "orchestrator/registry/layout.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/byte_pipe.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/redact.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using util::ExitCode;
using util::Failure;

namespace {

constexpr std::uint64_t k_max_config = 4u << 20;

[[noreturn]] void refuse(const std::string& source, const inspect::ImageError& e) {
  throw Failure(ExitCode::bad_input, source + ": " + e.message + " (nothing was written)");
}

// Reads what the scan left in the pipe (a tar's padding after its end
// blocks) so that the download runs to its end and its digest is checked
// over every byte.
inspect::StreamRead reader(util::BytePipe& pipe) {
  return [&pipe](std::span<std::byte> out) { return pipe.read(out); };
}

bool is_loopback(std::string_view host) {
  const auto colon = host.rfind(':');
  std::string_view name = host;
  if (colon != std::string_view::npos && host.find(']') == std::string_view::npos) name = host.substr(0, colon);
  if (host.starts_with("[")) name = host.substr(0, host.find(']') + 1);
  return name == "127.0.0.1" || name == "localhost" || name == "[::1]";
}

ScannedImage scan_docker(const ImageSource& source, const inspect::InspectOptions& options) {
  const auto found = engine::discover_engine(std::nullopt);
  if (!found || found->kind == engine::EngineKind::host)
    throw Failure(
        ExitCode::outside_failure,
        source.given + ": no container engine socket found" +
            (found ? " (looked at " + util::join(found->looked_at, ", ") + ")" : ": " + found.error().message) +
            "; start dockerd (scripts/start-dockerd.sh) or set DOCKER_HOST=unix://PATH");
  auto client = engine::DockerClient::connect(engine::make_unix_socket_transport(found->socket));
  if (!client) throw Failure(ExitCode::outside_failure, source.given + ": " + client.error().message);
  auto info = client->inspect_image(source.reference);
  if (!info) {
    if (info.error().kind == engine::ErrorKind::not_found)
      throw Failure(ExitCode::bad_input, source.given + ": the engine at " + found->socket.string() +
                                             " has no image '" + util::printable(source.reference) +
                                             "'; `docker images` lists the ones it has");
    throw Failure(ExitCode::outside_failure, source.given + ": " + info.error().message);
  }
  // The export names the image by its ID: a tag moved meanwhile changes nothing.
  const std::string id = info->id;
  util::BytePipe pipe;
  ScannedImage out{.source = source.given, .identity = id};
  const auto started = std::chrono::steady_clock::now();
  std::expected<inspect::ImageArchive, inspect::ImageError> archive;
  std::optional<std::string> engine_error;
  {
    std::atomic<bool> cancel{false};
    util::PipeProducer producer(pipe, [&]() -> std::optional<std::string> {
      net::CallbackSink sink([&](std::string_view bytes) { return pipe.write(bytes); });
      auto exported = client->export_image(id, sink, &cancel);
      if (!exported) return exported.error().message;
      return std::nullopt;
    });
    archive = inspect::scan_image_archive(reader(pipe), options);
    if (!archive)
      cancel = true;
    else
      pipe.drain();
    engine_error = producer.join();
  }
  if (!archive) {
    if (engine_error && !archive.error().refused)
      throw Failure(ExitCode::outside_failure, source.given + ": " + *engine_error);
    refuse(source.given, archive.error());
  }
  out.content = std::move(archive->content);
  out.config = std::move(archive->config);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

// A small blob (a config), read whole and checked against its digest.
std::string small_blob(registry::Client& client, const registry::Descriptor& d, const std::string& given) {
  if (d.size > k_max_config)
    throw Failure(ExitCode::bad_input,
                  given + ": the image config is " + std::to_string(d.size) + " bytes; no image config is that large");
  std::string body;
  auto got = client.stream_blob(d.digest, d.size, [&](std::string_view bytes) {
    body += bytes;
    return body.size() <= d.size;
  });
  if (!got) throw Failure(site::exit_code_for(got.error()), given + ": " + got.error().message);
  if (digest::sha256(body) != d.digest)
    throw Failure(ExitCode::outside_failure,
                  given + ": the registry served a config whose bytes do not match " + d.digest.to_string());
  return body;
}

// An index's linux/amd64 manifest (the first without a platform otherwise).
std::string pick_platform(const std::string& body, const std::string& given) {
  const auto index = registry::parse_index(body);
  if (!index)
    throw Failure(ExitCode::outside_failure,
                  given + ": the registry's image index is malformed: " + util::printable(index.error().message));
  const registry::Descriptor* chosen = registry::platform_manifest(*index, "linux", "amd64");
  if (!chosen) throw Failure(ExitCode::bad_input, given + ": the image index has no linux/amd64 image");
  return chosen->digest.to_string();
}

ScannedImage scan_registry(const ImageSource& source, const inspect::InspectOptions& options) {
  auto client = site::make_client(source.registry);
  const auto started = std::chrono::steady_clock::now();
  auto manifest = client->get_manifest(source.reference);
  if (!manifest && manifest.error().kind == registry::ErrorKind::not_found)
    throw Failure(ExitCode::bad_input, source.given + ": the registry has no such image (" + manifest.error().message +
                                           "); check the repository and the tag");
  if (!manifest) throw Failure(site::exit_code_for(manifest.error()), source.given + ": " + manifest.error().message);
  if (manifest->media_type == registry::k_oci_index || manifest->media_type == registry::k_docker_manifest_list) {
    const std::string digest = pick_platform(manifest->body, source.given);
    manifest = client->get_manifest(digest);
    if (!manifest) throw Failure(site::exit_code_for(manifest.error()), source.given + ": " + manifest.error().message);
  }
  auto parsed = registry::parse_manifest(manifest->body);
  if (!parsed) throw Failure(ExitCode::outside_failure, source.given + ": " + parsed.error().message);
  ScannedImage out{.source = source.given, .identity = manifest->digest.to_string()};
  out.config = small_blob(*client, parsed->config, source.given);

  inspect::ImageScanner scanner(options);
  std::vector<std::string> order;
  std::vector<const registry::Descriptor*> unique;  // the same blob twice is read once
  std::set<std::string> listed;
  for (const auto& layer : parsed->layers) {
    order.push_back(layer.digest.to_string());
    if (listed.insert(order.back()).second) unique.push_back(&layer);
  }
  // Layers are read several at once (a gzip layer's inflate is one core's
  // work): each worker with its own client, a pipe per layer between the
  // download (which checks the digest) and the scan.
  struct Outcome {
    std::optional<std::string> source_error;        // the registry's
    std::optional<inspect::ImageError> scan_error;  // the content's
  };
  std::vector<Outcome> outcomes(unique.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  const auto work = [&] {
    std::unique_ptr<registry::Client> own = site::make_client(source.registry);
    for (std::size_t i; !stop && (i = next++) < unique.size();) {
      const registry::Descriptor& layer = *unique[i];
      util::BytePipe pipe;
      std::expected<void, inspect::ImageError> added;
      {
        util::PipeProducer producer(pipe, [&]() -> std::optional<std::string> {
          digest::Sha256 hash;
          auto got = own->stream_blob(layer.digest, layer.size, [&](std::string_view bytes) {
            hash.update(bytes);
            return pipe.write(bytes);
          });
          if (!got) return got.error().message;
          if (hash.digest() != layer.digest)
            return "the registry served layer " + layer.digest.to_string() + " with bytes that do not match its digest";
          return std::nullopt;
        });
        added = scanner.add_layer(layer.digest.to_string(), reader(pipe));
        outcomes[i].source_error = producer.join();
      }
      if (!added) outcomes[i].scan_error = std::move(added.error());
      if (outcomes[i].source_error || outcomes[i].scan_error) stop = true;
    }
  };
  const std::size_t workers =
      std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), std::size_t{4}, unique.size()});
  if (workers > 0) {
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
  }
  // The first layer that failed, in the image's order, says why. The
  // registry's failure explains a cut stream; refused content stands on
  // its own.
  for (auto& o : outcomes) {
    if (o.source_error && (!o.scan_error || !o.scan_error->refused))
      throw Failure(ExitCode::outside_failure, source.given + ": " + *o.source_error);
    if (o.scan_error) refuse(source.given, *o.scan_error);
  }
  auto content = scanner.finish(order);
  if (!content) refuse(source.given, content.error());
  out.content = std::move(*content);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

bool worth_reading(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char head[4096];
  in.read(head, sizeof head);
  const auto n = static_cast<std::size_t>(in.gcount());
  const inspect::Bytes bytes(reinterpret_cast<const std::byte*>(head), n);
  // As in an image: what runs, and packages that hold it; static libraries
  // are for a link that happens elsewhere.
  static constexpr char k_ar[] = "!<arch>\n";
  if (n >= 8 && std::equal(head, head + 8, k_ar)) return false;
  return inspect::read_binaries(bytes) == inspect::MemberUse::read;
}

void rebase(inspect::FileReport& r, const std::string& from, const std::string& to) {
  if (r.path.starts_with(from)) r.path = to + r.path.substr(from.size());
  for (auto& m : r.members) rebase(m, from, to);
}

// A file of the directory as the bill of materials reads it, a piece at a
// time.
inspect::StreamRead file_reader(std::ifstream& in) {
  return [&in](std::span<std::byte> out) -> std::expected<std::size_t, std::string> {
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    if (in.bad()) return std::unexpected(std::string("the read failed"));
    return static_cast<std::size_t>(in.gcount());
  };
}

// An entry the walk found and could not look at: reported as inspect
// reports a file it cannot read (an error, exit 2), never passed over.
inspect::FileReport unreadable(const std::string& rel, const fs::path& full, const std::error_code& ec) {
  std::string why = "cannot read: " + ec.message();
  if (ec == std::errc::filename_too_long)
    why += ": its path is " + std::to_string(full.native().size()) + " bytes, over PATH_MAX (" +
           std::to_string(PATH_MAX) + "); inspect a directory nearer to it";
  return inspect::FileReport{.path = "/" + rel, .error = std::move(why)};
}

// How resolve_in_root sees the directory: each name looked at itself
// (lstat), so a link is never followed out of the root.
inspect::RootEntry look_up(const fs::path& root, std::string_view rel) {
  std::error_code ec;
  const fs::path p = root / std::string(rel);
  const auto status = fs::symlink_status(p, ec);
  if (ec) return {};
  if (fs::is_symlink(status)) {
    auto target = fs::read_symlink(p, ec);
    if (ec) return {};
    return {.type = inspect::RootEntry::Type::symlink, .target = target.string()};
  }
  if (fs::is_directory(status)) return {.type = inspect::RootEntry::Type::directory, .target = {}};
  if (fs::is_regular_file(status)) return {.type = inspect::RootEntry::Type::file, .target = {}};
  return {};
}

ScannedImage scan_directory(const ImageSource& source, const inspect::InspectOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  ScannedImage out{.source = source.given};
  const fs::path root = fs::absolute(source.directory).lexically_normal();
  std::vector<fs::path> candidates;
  std::vector<inspect::FileReport> unread;
  inspect::BomTexts texts;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw Failure(ExitCode::bad_input, source.given + ": cannot read the directory: " + ec.message());
  std::string last;  // the entry before the walk's next step, for its error
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec)
      throw Failure(ExitCode::bad_input,
                    source.given + ": cannot read the directory after /" + util::printable(last) + ": " + ec.message());
    const std::string rel = it->path().lexically_relative(root).generic_string();
    last = rel;
    const auto status = it->symlink_status(ec);
    if (ec) {
      // A directory the walk enters through its parent (the type readdir
      // gave it) is no loss itself: what under it cannot be read is said.
      std::error_code type_ec;
      if (!it->is_symlink(type_ec) && it->is_directory(type_ec) && !type_ec) {
        ec.clear();
        continue;
      }
      unread.push_back(unreadable(rel, it->path(), ec));
      ec.clear();
      continue;
    }
    if (fs::is_directory(status)) continue;
    if (inspect::bom_path(rel)) out.content.paths.push_back("/" + rel);
    if (fs::is_symlink(status)) {
      if (inspect::bom_path(rel)) out.content.links["/" + rel] = fs::read_symlink(it->path(), ec).string();
      ec.clear();
      continue;
    }
    if (!fs::is_regular_file(status)) continue;
    if (inspect::bom_text(rel)) {
      std::ifstream in(it->path(), std::ios::binary);
      const auto size = fs::file_size(it->path(), ec);
      auto evidence = texts.read(rel, ec ? 0 : size, file_reader(in), "'" + util::printable("/" + rel) + "'");
      ec.clear();
      if (!evidence.empty()) out.content.evidence["/" + rel] = std::move(evidence);
      continue;
    }
    if (worth_reading(it->path())) candidates.push_back(it->path());
  }
  std::sort(candidates.begin(), candidates.end());
  auto reports = inspect::inspect_files(candidates, options);
  for (auto& r : reports) {
    if (!r.device_code() && !r.runtime && !r.damage && !r.error && !inspect::links_cuda_libraries(r)) continue;
    const std::string abs = r.path;
    rebase(r, abs, "/" + fs::path(abs).lexically_relative(root).generic_string());
    out.content.files.push_back(std::move(r));
  }
  for (auto& r : unread) out.content.files.push_back(std::move(r));
  std::sort(out.content.files.begin(), out.content.files.end(),
            [](const inspect::FileReport& a, const inspect::FileReport& b) { return a.path < b.path; });
  std::sort(out.content.paths.begin(), out.content.paths.end());
  for (const auto& [link, target] : out.content.links)
    if (!inspect::resolve_in_root(link, [&](std::string_view rel) { return look_up(root, rel); }))
      out.content.dangling[link] = target;
  out.content.unread = texts.unread();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace

std::optional<ImageSource> parse_image_source(std::string_view arg) {
  ImageSource s{.given = std::string(arg)};
  if (arg.starts_with("docker://")) {
    s.kind = ImageSourceKind::docker;
    s.reference = std::string(arg.substr(9));
    if (s.reference.empty() || s.reference.find_first_of(" \t\n?#") != std::string::npos)
      throw Failure(ExitCode::bad_input, "'" + util::printable(arg) +
                                             "' names no image: write docker://REPO:TAG or docker://IMAGE-ID");
    // An '@' is a digest's; user:password@ has no place in the local
    // engine's names, and would be printed where the engine's answer quotes it.
    if (const auto at = s.reference.rfind('@');
        at != std::string::npos && !digest::Digest::parse(std::string_view(s.reference).substr(at + 1)))
      throw Failure(ExitCode::bad_input, "'" + util::redact_credentials(util::printable(arg)) +
                                             "' names no image of the local engine (credentials have no place "
                                             "there): write docker://REPO:TAG or docker://REPO@sha256:DIGEST");
    // The engine judges the name; what parses is kept for the commands that
    // need its parts ("sha256:<id>" is the engine's image ID, not a name).
    if (auto image = digest::ImageReference::parse(s.reference); image && !s.reference.starts_with("sha256:"))
      s.image = std::move(*image);
    return s;
  }
  const bool plain = arg.starts_with("oci+http://");
  if (plain || arg.starts_with("oci://")) {
    s.kind = ImageSourceKind::registry;
    const std::string_view rest = arg.substr(plain ? 11 : 6);
    const auto slash = rest.find('/');
    const auto bad = [&] {
      return Failure(ExitCode::bad_input, "'" + util::redact_credentials(util::printable(arg)) +
                                              "' is not a registry image: write oci://HOST[:PORT]/REPO:TAG or "
                                              "oci://HOST/REPO@sha256:DIGEST");
    };
    if (slash == std::string_view::npos || slash == 0) throw bad();
    // USER:PASSWORD@HOST, read as the registry client reads its URL (the
    // authority runs to the first '/', its userinfo to the last '@' in it):
    // `registry` keeps it, for the client to send; `given`, what every
    // message and report prints, does not.
    const std::string_view authority = rest.substr(0, slash);
    const auto userinfo_end = authority.rfind('@');
    const std::string_view host =
        userinfo_end == std::string_view::npos ? authority : authority.substr(userinfo_end + 1);
    if (host.empty()) throw bad();
    if (userinfo_end != std::string_view::npos)
      s.given = std::string(arg.substr(0, arg.size() - rest.size())) + std::string(rest.substr(userinfo_end + 1));
    const std::string_view path = rest.substr(slash + 1);
    auto image = digest::ImageReference::parse_at(host, path);
    if (!image) throw bad();
    s.reference = image->digest() ? image->digest()->to_string() : image->tag_or_latest();
    s.image = std::move(*image);
    s.registry =
        std::string(plain || is_loopback(host) ? "http://" : "https://") + std::string(authority) + "/" + s.image->path();
    return s;
  }
  std::error_code ec;
  if (fs::is_directory(fs::path(arg), ec)) {
    s.kind = ImageSourceKind::directory;
    s.directory = fs::path(arg);
    return s;
  }
  return std::nullopt;
}

ScannedImage scan_image(const ImageSource& source, const inspect::InspectOptions& options) {
  switch (source.kind) {
    case ImageSourceKind::docker:
      return scan_docker(source, options);
    case ImageSourceKind::registry:
      return scan_registry(source, options);
    case ImageSourceKind::directory:
      break;
  }
  return scan_directory(source, options);
}

}  // namespace orc::app
