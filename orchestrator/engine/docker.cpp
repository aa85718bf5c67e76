// DockerClient: connection, versions and images. Containers are in
// docker_containers.cpp.
#include "orchestrator/engine/docker.hpp"

#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>

#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/engine/progress.hpp"
#include "orchestrator/engine/temp_file.hpp"

namespace orc::engine {

namespace {

using nlohmann::json;

// Calls that should answer at once (inspect, create, start) still get time
// for an engine busy unpacking a large image on a loaded machine.
constexpr std::chrono::milliseconds k_control_timeout{120'000};
// An import gets that plus its tar at this rate (a local socket moves
// hundreds of MB/s; the engine writes the layer to disk as it reads): the
// 5.4 GB CUDA 11.8 image is given 23 minutes.
constexpr std::uint64_t k_import_min_rate = 4u << 20;

Error protocol_error(std::string_view doing, std::string_view what) {
  return Error{.kind = ErrorKind::protocol, .message = std::string(doing) + ": " + std::string(what)};
}

std::expected<ImageInfo, Error> parse_image(std::string_view body, std::string_view doing) {
  auto info = read_image_info(body);
  if (!info) return std::unexpected(protocol_error(doing, info.error()));
  return std::move(*info);
}

// Collects a progress stream: output text to the log, the first error and
// the last image ID seen.
class ProgressSink final : public net::BodySink {
 public:
  explicit ProgressSink(LogSink* log, bool statuses = false)
      : m_log(log), m_statuses(statuses), m_parser([this](const ProgressEvent& e) { take(e); }) {}
  bool chunk(std::string_view bytes) override {
    m_parser.feed(bytes);
    return true;
  }
  void finish() { m_parser.finish(); }

  const std::string& error() const { return m_error; }
  const std::string& image_id() const { return m_image_id; }
  const std::optional<std::string>& parse_error() const { return m_parser.error(); }

 private:
  void take(const ProgressEvent& e) {
    if (m_log && !e.stream.empty()) m_log->on_output(OutputStream::out, e.stream);
    // A pull's own lines and each layer's end; not its many "Downloading" ones.
    if (m_log && m_statuses && !e.status.empty() &&
        (e.id.empty() || e.status == "Pull complete" || e.status == "Already exists"))
      m_log->on_output(OutputStream::out, (e.id.empty() ? "" : e.id + ": ") + e.status + "\n");
    if (!e.error.empty() && m_error.empty()) m_error = e.error;
    if (e.is_aux_id) m_image_id = e.id;
    if (e.status.starts_with("sha256:")) m_image_id = e.status;
  }

  LogSink* m_log;
  bool m_statuses;
  ProgressParser m_parser;
  std::string m_error;
  std::string m_image_id;
};

}  // namespace

std::unique_ptr<net::Transport> make_unix_socket_transport(std::filesystem::path socket) {
  return net::make_curl_transport({.unix_socket = std::move(socket), .peer = "engine"});
}

std::expected<ApiVersion, Error> negotiate(const EngineVersion& engine) {
  const ApiVersion chosen = std::min(engine.api, k_max_api);
  const std::string name = std::string(engine.podman ? "Podman " : "engine ") + engine.version;
  if (chosen < k_min_api)
    return std::unexpected(Error{.kind = ErrorKind::unsupported_version,
                                 .message = name + " speaks Docker API " + engine.api.str() + "; at least " +
                                            k_min_api.str() + " is needed (Docker 20.10, Podman 4)"});
  if (engine.min_api > chosen)
    return std::unexpected(Error{.kind = ErrorKind::unsupported_version,
                                 .message = name + " no longer speaks Docker API " + chosen.str() + " (its oldest is " +
                                            engine.min_api.str() + ")"});
  return chosen;
}

DockerClient::DockerClient(std::unique_ptr<net::Transport> transport, EngineVersion engine, ApiVersion api)
    : m_transport(std::move(transport)), m_engine(std::move(engine)), m_api(api) {}

std::expected<DockerClient, Error> DockerClient::connect(std::unique_ptr<net::Transport> transport) {
  net::Request request{.method = "GET", .url = "/version", .timeout = k_control_timeout};
  auto response = transport->send(request);
  if (!response) return std::unexpected(from_transport(response.error(), "connecting to the container engine"));
  if (!response->ok()) return std::unexpected(from_status(*response, "asking the engine's version"));
  auto engine = parse_version(response->body);
  if (!engine) return std::unexpected(engine.error());
  auto api = negotiate(*engine);
  if (!api) return std::unexpected(api.error());
  return DockerClient(std::move(transport), std::move(*engine), *api);
}

std::string DockerClient::versioned(std::string_view path) const { return "/v" + m_api.str() + std::string(path); }

net::Request DockerClient::control(std::string method, std::string path) const {
  return net::Request{.method = std::move(method), .url = versioned(path), .timeout = k_control_timeout};
}

std::expected<net::Response, Error> DockerClient::call(net::Request request, std::string_view doing,
                                                       net::BodySink* sink) {
  auto response = m_transport->send(request, sink);
  if (!response) return std::unexpected(from_transport(response.error(), doing));
  if (!response->ok()) return std::unexpected(from_status(*response, doing));
  return std::move(*response);
}

std::expected<void, Error> DockerClient::ping() {
  auto response = call(control("GET", "/_ping"), "pinging the engine");
  if (!response) return std::unexpected(response.error());
  return {};
}

std::expected<ImageInfo, Error> DockerClient::inspect_image(std::string_view ref) {
  const std::string doing = "looking up image '" + std::string(ref) + "'";
  // A reference holds '/' and ':' which the path takes as they are.
  auto response = call(control("GET", "/images/" + std::string(ref) + "/json"), doing);
  if (!response) return std::unexpected(response.error());
  return parse_image(response->body, doing);
}

std::expected<ImageInfo, Error> DockerClient::import_image(const std::filesystem::path& rootfs_tar,
                                                           std::string_view repo, std::string_view tag) {
  const std::string ref = std::string(repo) + ":" + std::string(tag);
  const std::string doing = "importing " + rootfs_tar.string() + " as " + ref;
  auto body = net::file_body(rootfs_tar);
  if (!body) return std::unexpected(Error{.kind = ErrorKind::io, .message = doing + ": " + body.error()});
  const auto timeout = k_control_timeout + std::chrono::seconds(body->size.value_or(0) / k_import_min_rate);
  net::Request request{
      .method = "POST",
      .url = versioned("/images/create?fromSrc=-&repo=" + net::url_encode(repo) + "&tag=" + net::url_encode(tag)),
      .headers = {{"Content-Type", "application/x-tar"}},
      .body = std::move(*body),
      .timeout = timeout};
  ProgressSink progress(nullptr);
  if (auto response = call(std::move(request), doing, &progress); !response) return std::unexpected(response.error());
  progress.finish();
  if (!progress.error().empty())
    return std::unexpected(Error{.kind = ErrorKind::api, .message = doing + ": " + progress.error()});

  auto info = inspect_image(ref);
  if (!info && info.error().kind == ErrorKind::not_found && !progress.image_id().empty()) {
    // Podman ignores `tag` on import; tag the new image as asked.
    auto tagged = call(control("POST", "/images/" + progress.image_id() + "/tag?repo=" + net::url_encode(repo) +
                                           "&tag=" + net::url_encode(tag)),
                       "tagging the imported image as " + ref);
    if (!tagged) return std::unexpected(tagged.error());
    info = inspect_image(ref);
  }
  return info;
}

std::expected<ImageInfo, Error> DockerClient::pull_image(std::string_view ref, LogSink* log,
                                                         const std::atomic<bool>* cancel) {
  const std::string doing = "pulling " + std::string(ref);
  auto reference = digest::ImageReference::parse(ref);
  if (!reference)
    return std::unexpected(Error{.kind = ErrorKind::invalid_spec, .message = doing + ": " + reference.error()});
  // The engine pulls fromImage at `tag`, which may be a digest.
  const std::string repo = reference->digest() && reference->tag()
                               ? reference->repository() + ":" + *reference->tag()
                               : reference->repository();
  const std::string tag =
      reference->digest() ? reference->digest()->to_string() : reference->tag_or_latest();
  // No whole-exchange limit (a multi-gigabyte pull takes what it takes),
  // but a registry that sends nothing for ten minutes fails it.
  net::Request request{
      .method = "POST",
      .url = versioned("/images/create?fromImage=" + net::url_encode(repo) + "&tag=" + net::url_encode(tag)),
      .headers = {},
      .body = std::string(),
      .timeout = std::chrono::milliseconds(0),
      .stall_timeout = std::chrono::minutes(10),
      .cancel = cancel};
  ProgressSink progress(log, true);
  if (auto response = call(std::move(request), doing, &progress); !response) return std::unexpected(response.error());
  progress.finish();
  if (!progress.error().empty())
    return std::unexpected(Error{.kind = ErrorKind::api, .message = doing + ": " + progress.error()});
  return inspect_image(ref);
}

std::expected<void, Error> DockerClient::export_image(std::string_view ref, net::BodySink& sink,
                                                     const std::atomic<bool>* cancel) {
  // As a pull: no whole-exchange limit, but an engine that sends nothing
  // for ten minutes has failed.
  net::Request request{.method = "GET",
                       .url = versioned("/images/" + std::string(ref) + "/get"),
                       .headers = {},
                       .body = std::string(),
                       .timeout = std::chrono::milliseconds(0),
                       .stall_timeout = std::chrono::minutes(10),
                       .cancel = cancel};
  if (auto response = call(std::move(request), "exporting image '" + std::string(ref) + "'", &sink); !response)
    return std::unexpected(response.error());
  return {};
}

std::expected<std::vector<std::string>, Error> DockerClient::load_image(net::StreamedBody body) {
  const std::string doing = "loading an image archive";
  net::Request request{.method = "POST",
                       .url = versioned("/images/load?quiet=1"),
                       .headers = {{"Content-Type", "application/x-tar"}},
                       .body = std::move(body),
                       .timeout = std::chrono::milliseconds(0),
                       .stall_timeout = std::chrono::minutes(10)};
  std::vector<std::string> loaded;
  std::string error;
  ProgressParser parser([&](const ProgressEvent& e) {
    if (!e.error.empty() && error.empty()) error = e.error;
    std::string line = e.stream;
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    if (line.starts_with("Loaded image")) loaded.push_back(line);
  });
  net::CallbackSink sink([&](std::string_view bytes) {
    parser.feed(bytes);
    return true;
  });
  if (auto response = call(std::move(request), doing, &sink); !response) return std::unexpected(response.error());
  parser.finish();
  if (!error.empty()) return std::unexpected(Error{.kind = ErrorKind::api, .message = doing + ": " + error});
  return loaded;
}

std::expected<ImageInfo, Error> DockerClient::build_image(const std::filesystem::path& context_dir,
                                                          std::string_view tag, const ImageBuildOptions& options,
                                                          LogSink& log) {
  const std::string doing = "building image " + std::string(tag);
  auto context = TempFile::create("context");
  if (!context) return std::unexpected(Error{.kind = ErrorKind::io, .message = doing + ": " + context.error()});
  if (auto written = write_context_tar(context_dir, context->path()); !written) return std::unexpected(written.error());
  auto body = net::file_body(context->path());
  if (!body) return std::unexpected(Error{.kind = ErrorKind::io, .message = doing + ": " + body.error()});

  json args = json::object();
  for (const auto& [key, value] : options.build_args) args[key] = value;
  std::string target = "/build?t=" + net::url_encode(tag) + "&dockerfile=" + net::url_encode(options.dockerfile) +
                       "&networkmode=" + net::url_encode(options.network) + "&rm=1&forcerm=1";
  if (options.no_cache) target += "&nocache=1";
  if (!options.build_args.empty()) target += "&buildargs=" + net::url_encode(args.dump());
  net::Request request{.method = "POST",
                       .url = versioned(target),
                       .headers = {{"Content-Type", "application/x-tar"}},
                       .body = std::move(*body)};
  ProgressSink progress(&log);
  if (auto response = call(std::move(request), doing, &progress); !response) return std::unexpected(response.error());
  progress.finish();
  if (!progress.error().empty())
    return std::unexpected(Error{.kind = ErrorKind::build_failed, .message = doing + ": " + progress.error()});
  if (progress.parse_error()) return std::unexpected(protocol_error(doing, *progress.parse_error()));
  return inspect_image(tag);
}

}  // namespace orc::engine
