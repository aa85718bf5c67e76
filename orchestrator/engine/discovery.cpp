#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/util/env.hpp"

#include <cstdlib>
#include <system_error>

namespace orc::engine {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_unix_scheme = "unix://";

// A socket named by an environment variable: nullopt when unset, an error
// when it is not a unix socket. Only the scheme is quoted back: the rest of
// a URL can hold a user name or a token.
std::expected<std::optional<fs::path>, Error> socket_from_variable(const char* name, const DiscoveryEnvironment& env) {
  const auto value = env.getenv(name);
  if (!value || value->empty()) return std::nullopt;
  if (value->starts_with(k_unix_scheme) && value->size() > k_unix_scheme.size())
    return fs::path(value->substr(k_unix_scheme.size()));
  const auto scheme_end = value->find("://");
  const std::string scheme =
      scheme_end == std::string::npos ? "a path without a scheme" : value->substr(0, scheme_end + 3);
  return std::unexpected(
      Error{.kind = ErrorKind::config,
            .message = std::string(name) + " uses " + scheme +
                       "; only unix:// sockets are supported (for example unix:///var/run/docker.sock)"});
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

std::string_view to_string(EngineKind kind) {
  switch (kind) {
    case EngineKind::docker:
      return "docker";
    case EngineKind::podman:
      return "podman";
    case EngineKind::host:
      return "host";
  }
  return "host";
}

std::optional<EngineKind> parse_engine_kind(std::string_view text) {
  for (EngineKind kind : {EngineKind::docker, EngineKind::podman, EngineKind::host})
    if (text == to_string(kind)) return kind;
  return std::nullopt;
}

DiscoveryEnvironment DiscoveryEnvironment::system() {
  return DiscoveryEnvironment{
      .getenv = [](const char* name) { return util::env_get(name); },
      .exists =
          [](const fs::path& path) {
            std::error_code ec;
            return fs::exists(path, ec);
          },
  };
}

std::expected<Discovery, Error> discover_engine(std::optional<EngineKind> requested, const DiscoveryEnvironment& env) {
  if (requested == EngineKind::host)
    return Discovery{.kind = EngineKind::host,
                     .reason = "--engine host: builds run on this machine as plain processes, not isolated"};

  std::vector<std::string> looked_at;
  for (EngineKind kind : {EngineKind::docker, EngineKind::podman}) {
    if (requested && *requested != kind) continue;
    const char* variable = kind == EngineKind::docker ? "DOCKER_HOST" : "CONTAINER_HOST";
    auto named = socket_from_variable(variable, env);
    if (!named) return std::unexpected(named.error());
    if (*named) {
      looked_at.push_back(std::string(variable));
      return Discovery{.kind = kind,
                       .socket = **named,
                       .reason = std::string(variable) + " names " + (*named)->string(),
                       .looked_at = looked_at};
    }
    looked_at.push_back(std::string(variable) + " (unset)");
    std::vector<fs::path> sockets;
    if (kind == EngineKind::docker) {
      sockets.emplace_back("/var/run/docker.sock");
    } else {
      if (const auto runtime = env.getenv("XDG_RUNTIME_DIR"); runtime && !runtime->empty())
        sockets.push_back(fs::path(*runtime) / "podman/podman.sock");
      sockets.emplace_back("/run/podman/podman.sock");
    }
    for (const fs::path& socket : sockets) {
      looked_at.push_back(socket.string());
      if (env.exists(socket))
        return Discovery{.kind = kind, .socket = socket, .reason = "found " + socket.string(), .looked_at = looked_at};
    }
  }
  if (requested)
    return std::unexpected(Error{.kind = ErrorKind::socket_missing,
                                 .message = "--engine " + std::string(to_string(*requested)) +
                                            ": no engine socket found (looked at " + join(looked_at) + ")"});
  return Discovery{.kind = EngineKind::host,
                   .reason = "no container engine socket found (looked at " + join(looked_at) +
                             "): builds run on this machine, not isolated",
                   .looked_at = looked_at};
}

}  // namespace orc::engine
