#pragma once
// Which container engine to use, and why: `--engine docker|podman|host`,
// else the first socket found in this order:
//   DOCKER_HOST (unix:// only), /var/run/docker.sock,
//   CONTAINER_HOST (Podman's variable, unix:// only),
//   $XDG_RUNTIME_DIR/podman/podman.sock, /run/podman/podman.sock,
// else the host engine (builds run as local processes, not isolated).
// A variable that is set wins even when its socket is missing: the user
// asked for it, and connecting then says what is wrong.
#include <expected>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/engine/error.hpp"

namespace orc::engine {

enum class EngineKind { docker, podman, host };

std::string_view to_string(EngineKind kind);
// "docker", "podman", "host"; anything else -> nullopt.
std::optional<EngineKind> parse_engine_kind(std::string_view text);

struct Discovery {
  EngineKind kind = EngineKind::host;
  std::filesystem::path socket;        // empty for host
  std::string reason;                  // one sentence for the user
  std::vector<std::string> looked_at;  // every place tried, in order
};

// The outside world discovery reads, as a seam for tests.
struct DiscoveryEnvironment {
  std::function<std::optional<std::string>(const char* name)> getenv;
  std::function<bool(const std::filesystem::path&)> exists;

  static DiscoveryEnvironment system();
};

// `requested` is --engine (or the config's choice); nullopt means discover.
// Errors (kind config): DOCKER_HOST or CONTAINER_HOST not unix://, or a
// requested docker/podman engine with no socket anywhere.
std::expected<Discovery, Error> discover_engine(std::optional<EngineKind> requested,
                                                const DiscoveryEnvironment& env = DiscoveryEnvironment::system());

}  // namespace orc::engine
