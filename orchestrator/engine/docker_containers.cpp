// DockerClient: the container calls.
#include <fcntl.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "orchestrator/engine/docker.hpp"
#include "orchestrator/engine/temp_file.hpp"
#include "orchestrator/util/fd.hpp"
#include "orchestrator/util/write.hpp"

namespace orc::engine {

namespace {

// copy_out's bounds: no byte for two minutes is a stuck engine; an hour
// bounds the whole copy of a build's artifacts.
constexpr std::chrono::milliseconds k_copy_stall{120'000};
constexpr std::chrono::milliseconds k_copy_timeout{3'600'000};

using nlohmann::json;

std::string short_id(std::string_view id) { return std::string(id.substr(0, 12)); }

Error invalid(std::string what) { return Error{.kind = ErrorKind::invalid_spec, .message = std::move(what)}; }

// Binds are "host:container[:ro]" strings, so neither path may hold ':'
// (or ',', which Podman reads as an option separator).
std::expected<std::string, Error> bind_string(const Mount& m) {
  const std::string host = m.host.string();
  if (!m.host.is_absolute()) return std::unexpected(invalid("bind mount source '" + host + "' is not absolute"));
  if (!m.container.starts_with('/'))
    return std::unexpected(invalid("bind mount target '" + m.container + "' is not absolute"));
  for (const std::string* path : {&host, &m.container})
    if (path->find_first_of(":,") != std::string::npos)
      return std::unexpected(invalid("bind mount path '" + *path + "' holds ':' or ','"));
  return host + ":" + m.container + (m.access == Access::read_only ? ":ro" : ":rw");
}

json ulimit(const char* name, std::uint64_t value) { return json{{"Name", name}, {"Soft", value}, {"Hard", value}}; }

// The "message" of the engine's JSON error object, else the text itself on
// one line (it may have been cut at LogDemuxer::k_engine_error_max).
std::string engine_error_message(const std::string& text) {
  const json parsed = json::parse(text, nullptr, false);
  if (parsed.is_object() && parsed.contains("message") && parsed["message"].is_string())
    return parsed["message"].get<std::string>();
  std::string line = text;
  std::replace_if(line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return line;
}

// Feeds the log stream to a demuxer, stopping at the first bad frame.
class LogStreamSink final : public net::BodySink {
 public:
  LogStreamSink(LogSink& log, LogDemuxer::Mode mode) : m_demuxer(log, mode) {}
  bool chunk(std::string_view bytes) override {
    auto ok = m_demuxer.feed(bytes);
    if (!ok) m_error = std::move(ok.error());
    return ok.has_value();
  }
  LogDemuxer& demuxer() { return m_demuxer; }
  const std::string& error() const { return m_error; }

 private:
  LogDemuxer m_demuxer;
  std::string m_error;
};

// Writes a download to a file as it arrives.
class FileSink final : public net::BodySink {
 public:
  explicit FileSink(const std::filesystem::path& path)
      : m_fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) {}

  bool is_open() const { return m_fd.get() >= 0; }
  bool chunk(std::string_view bytes) override {
    if (is_open() && util::write_all(m_fd.get(), bytes)) return true;
    m_write_failed = true;
    return false;
  }
  bool write_failed() const { return m_write_failed; }
  bool close() { return is_open() && m_fd.close() == 0; }

 private:
  util::Fd m_fd;
  bool m_write_failed = false;
};

}  // namespace

std::expected<json, Error> create_body(const BuildSpec& spec) {
  if (spec.image.empty()) return std::unexpected(invalid("no image given"));
  json env = json::array();
  for (const auto& [key, value] : spec.env) {
    if (key.empty() || key.find('=') != std::string::npos)
      return std::unexpected(invalid("environment variable name '" + key + "' is empty or holds '='"));
    env.push_back(key + "=" + value);
  }
  json binds = json::array();
  for (const Mount& m : spec.mounts) {
    auto bind = bind_string(m);
    if (!bind) return std::unexpected(bind.error());
    binds.push_back(std::move(*bind));
  }
  if (spec.limits.nofile == 0 || spec.limits.nproc == 0)
    return std::unexpected(invalid("nofile and nproc must be > 0"));
  json labels = json::object();
  for (const auto& [key, value] : spec.labels) labels[key] = value;
  labels[std::string(k_managed_label)] = "1";

  json host{{"Binds", std::move(binds)},
            {"NetworkMode", spec.network.empty() ? "none" : spec.network},
            {"Ulimits", json::array({ulimit("nofile", spec.limits.nofile), ulimit("nproc", spec.limits.nproc)})},
            {"AutoRemove", false}};
  if (spec.limits.memory_bytes) host["Memory"] = *spec.limits.memory_bytes;
  if (spec.limits.cpus) host["NanoCpus"] = static_cast<std::int64_t>(*spec.limits.cpus * 1e9);

  json body{{"Image", spec.image},          {"Env", std::move(env)}, {"Tty", spec.tty},
            {"OpenStdin", false},           {"AttachStdin", false},  {"Labels", std::move(labels)},
            {"HostConfig", std::move(host)}};
  if (!spec.argv.empty()) body["Cmd"] = spec.argv;
  if (!spec.working_dir.empty()) body["WorkingDir"] = spec.working_dir;
  if (!spec.user.empty()) body["User"] = spec.user;
  return body;
}

std::expected<std::string, Error> DockerClient::create_container(const BuildSpec& spec) {
  auto body = create_body(spec);
  if (!body) return std::unexpected(body.error());
  const std::string doing = "creating a container from image '" + spec.image + "'";
  net::Request request =
      control("POST", "/containers/create" + (spec.name.empty() ? "" : "?name=" + net::url_encode(spec.name)));
  request.headers = {{"Content-Type", "application/json"}};  // anything else is a 400
  request.body = body->dump();
  auto response = call(std::move(request), doing);
  if (!response) {
    Error error = response.error();
    if (error.kind == ErrorKind::not_found)
      error.message =
          "image '" + spec.image + "' is not in the engine; import or build it first (" + error.message + ")";
    return std::unexpected(std::move(error));
  }
  auto id = read_created_id(response->body);
  if (!id) return std::unexpected(Error{.kind = ErrorKind::protocol, .message = doing + ": " + id.error()});
  return std::move(*id);
}

std::expected<void, Error> DockerClient::start_container(std::string_view id) {
  auto response =
      call(control("POST", "/containers/" + std::string(id) + "/start"), "starting container " + short_id(id));
  if (!response) return std::unexpected(response.error());
  return {};
}

std::expected<void, Error> DockerClient::follow_logs(std::string_view id, bool tty, LogSink& log,
                                                     const std::atomic<bool>* cancel) {
  const std::string doing = "following the output of container " + short_id(id);
  net::Request request{.method = "GET",
                       .url = versioned("/containers/" + std::string(id) + "/logs?follow=1&stdout=1&stderr=1"),
                       .cancel = cancel};
  LogStreamSink sink(log, tty ? LogDemuxer::Mode::raw : LogDemuxer::Mode::multiplexed);
  auto response = call(std::move(request), doing, &sink);
  if (const std::string& text = sink.demuxer().engine_error(); !text.empty())
    return std::unexpected(Error{.kind = ErrorKind::protocol,
                                 .message = doing + ": the engine broke off the stream with an error of its own: " +
                                            engine_error_message(text)});
  if (!sink.error().empty())
    return std::unexpected(Error{.kind = ErrorKind::protocol, .message = doing + ": " + sink.error()});
  if (!response) return std::unexpected(response.error());
  if (auto ended = sink.demuxer().finish(); !ended)
    return std::unexpected(Error{.kind = ErrorKind::protocol, .message = doing + ": " + ended.error()});
  return {};
}

std::expected<int, Error> DockerClient::wait_container(std::string_view id, const std::atomic<bool>* cancel) {
  const std::string doing = "waiting for container " + short_id(id);
  // No timeout: a build takes as long as it takes.
  net::Request request{
      .method = "POST", .url = versioned("/containers/" + std::string(id) + "/wait"), .cancel = cancel};
  auto response = call(std::move(request), doing);
  if (!response) return std::unexpected(response.error());
  const auto answer = read_wait(response->body);
  if (!answer) return std::unexpected(Error{.kind = ErrorKind::protocol, .message = doing + ": " + answer.error()});
  if (!answer->error.empty())
    return std::unexpected(Error{.kind = ErrorKind::api, .message = doing + ": " + answer->error});
  return answer->status_code;
}

std::expected<std::string, Error> DockerClient::container_status(std::string_view id) {
  const std::string doing = "inspecting container " + short_id(id);
  auto response = call(control("GET", "/containers/" + std::string(id) + "/json"), doing);
  if (!response) return std::unexpected(response.error());
  auto status = read_container_status(response->body);
  if (!status) return std::unexpected(Error{.kind = ErrorKind::protocol, .message = doing + ": " + status.error()});
  return std::move(*status);
}

std::expected<void, Error> DockerClient::kill_container(std::string_view id) {
  auto response =
      call(control("POST", "/containers/" + std::string(id) + "/kill"), "killing container " + short_id(id));
  if (!response) return std::unexpected(response.error());
  return {};
}

std::expected<void, Error> DockerClient::remove_container(std::string_view id) {
  auto response =
      call(control("DELETE", "/containers/" + std::string(id) + "?force=1&v=1"), "removing container " + short_id(id));
  // Already gone is what removing asked for.
  if (!response && response.error().kind != ErrorKind::not_found) return std::unexpected(response.error());
  return {};
}

std::expected<std::vector<ContainerSummary>, Error> DockerClient::list_containers(std::string_view label) {
  const json filters{{"label", json::array({std::string(label)})}};
  const std::string doing = "listing containers labelled " + std::string(label);
  auto response = call(control("GET", "/containers/json?all=1&filters=" + net::url_encode(filters.dump())), doing);
  if (!response) return std::unexpected(response.error());
  auto list = read_container_list(response->body);
  if (!list) return std::unexpected(Error{.kind = ErrorKind::protocol, .message = doing + ": " + list.error()});
  return std::move(*list);
}

std::expected<ExtractStats, Error> DockerClient::copy_out(std::string_view id, std::string_view path,
                                                          const std::filesystem::path& dest) {
  const std::string doing = "copying " + std::string(path) + " out of container " + short_id(id);
  auto download = TempFile::create("archive");
  if (!download) return std::unexpected(Error{.kind = ErrorKind::io, .message = doing + ": " + download.error()});
  FileSink file(download->path());
  if (!file.is_open())
    return std::unexpected(
        Error{.kind = ErrorKind::io, .message = doing + ": cannot write " + download->path().string()});
  net::Request request{.method = "GET",
                       .url = versioned("/containers/" + std::string(id) + "/archive?path=" + net::url_encode(path)),
                       .timeout = k_copy_timeout,
                       .stall_timeout = k_copy_stall};
  auto response = call(std::move(request), doing, &file);
  const bool closed = file.close();
  if (!response) {
    Error error = response.error();
    if (file.write_failed())
      error = Error{.kind = ErrorKind::io, .message = doing + ": writing " + download->path().string() + " failed"};
    return std::unexpected(std::move(error));
  }
  if (!closed) return std::unexpected(Error{.kind = ErrorKind::io, .message = doing + ": writing the download failed"});
  auto stats = extract_tar(download->path(), dest);
  if (!stats) {
    Error error = stats.error();
    error.message = doing + ": " + error.message;
    return std::unexpected(std::move(error));
  }
  return stats;
}

}  // namespace orc::engine
