#pragma once
// The JSON bodies the Docker Engine API (and Podman's compatible API) sends
// back, read into our types. An engine is an outside system: every reader
// takes any bytes and returns a value or what was missing, never throws.
// DockerClient adds what it was doing when the answer came.
#include <compare>
#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/engine/error.hpp"

namespace orc::engine {

struct ApiVersion {
  int major = 1;
  int minor = 0;

  // "1.41" -> {1, 41}; anything else -> nullopt.
  static std::optional<ApiVersion> parse(std::string_view text);
  std::string str() const;
  auto operator<=>(const ApiVersion&) const = default;
};

// The oldest API whose requests we send, and the newest we have checked
// them against; a newer engine is spoken to at k_max_api.
inline constexpr ApiVersion k_min_api{1, 41};
inline constexpr ApiVersion k_max_api{1, 43};

// GET /version's answer, the parts we use.
struct EngineVersion {
  std::string version;  // "20.10.24", "4.3.1"
  ApiVersion api;       // ApiVersion: the newest the engine speaks
  ApiVersion min_api;   // MinAPIVersion: the oldest
  std::string os;       // "linux"
  std::string arch;     // "amd64"
  bool podman = false;  // a component named "Podman Engine"
};

// Parses GET /version's body.
std::expected<EngineVersion, Error> parse_version(std::string_view body);
struct ImageInfo {
  std::string id;  // "sha256:..."
  std::vector<std::string> tags;
  std::vector<std::string> digests;  // repo@sha256:..., for pushed/pulled images
  std::uint64_t size = 0;
  std::map<std::string, std::string> labels;  // Config.Labels; values that are not strings are left out
};

struct ContainerSummary {
  std::string id;
  std::string state;  // "created", "running", "exited", ...
  std::string image;
};

// POST /containers/{id}/wait.
struct WaitAnswer {
  int status_code = 0;
  std::string error;  // Error.Message: waiting itself failed
};

// GET /images/{ref}/json: needs a non-empty "Id".
std::expected<ImageInfo, std::string> read_image_info(std::string_view body);
// POST /containers/create: the new container's "Id".
std::expected<std::string, std::string> read_created_id(std::string_view body);
// POST /containers/{id}/wait: {"StatusCode": 0, "Error": null}, keys in
// either order (Podman swaps them); Error is {"Message": "..."} when waiting
// failed.
std::expected<WaitAnswer, std::string> read_wait(std::string_view body);
// GET /containers/{id}/json: State.Status.
std::expected<std::string, std::string> read_container_status(std::string_view body);
// GET /containers/json: a list; entries that are not objects are skipped.
std::expected<std::vector<ContainerSummary>, std::string> read_container_list(std::string_view body);
// An error answer's text: Docker sends {"message": "..."}, Podman adds
// "cause" and "response"; anything else is shown as sent, trailing space
// trimmed and cut at 500 bytes; an empty body names the HTTP status.
std::string read_engine_message(std::string_view body, int status);

}  // namespace orc::engine
