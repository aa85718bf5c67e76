#pragma once
// A client of the Docker Engine API (1.41 and later) and of Podman's
// Docker-compatible API, over any net::Transport. Every call is one or two HTTP
// exchanges; the container life cycle built from them is DockerEngine's.
//
// Versioning: connect() asks GET /version (unversioned) and speaks
// min(the engine's ApiVersion, k_max_api) from then on, as "/v1.41/..."
// paths. Engines older than k_min_api are refused; Podman reports the Docker
// API level it emulates (1.41 for Podman 4.3), so it negotiates the same way.
#include <compare>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "orchestrator/engine/answers.hpp"
#include "orchestrator/engine/archive.hpp"
#include "orchestrator/engine/engine.hpp"
#include "orchestrator/engine/error.hpp"
#include "orchestrator/engine/log_stream.hpp"
#include "orchestrator/net/http.hpp"

namespace orc::engine {

// The engine's API over its unix socket: the libcurl transport, whose
// connection messages name the engine ("no engine socket at ...").
std::unique_ptr<net::Transport> make_unix_socket_transport(std::filesystem::path socket);

// The version to speak: min(engine's, k_max_api), which must be at least
// k_min_api and at least the engine's own minimum.
std::expected<ApiVersion, Error> negotiate(const EngineVersion& engine);

struct ImageBuildOptions {
  std::string dockerfile = "Dockerfile";  // path inside the context
  // The builder's network: "none", or "host" when RUN steps must reach a
  // package mirror (the engine has no bridge here).
  std::string network = "none";
  std::vector<std::pair<std::string, std::string>> build_args;
  bool no_cache = false;
};

// The JSON body of POST /containers/create for `spec` (validated first: an
// empty image, a relative or ':'-holding bind path, an empty or '='-holding
// variable name are invalid_spec).
std::expected<nlohmann::json, Error> create_body(const BuildSpec& spec);

class DockerClient {
 public:
  // Asks the engine's version and negotiates the API version.
  static std::expected<DockerClient, Error> connect(std::unique_ptr<net::Transport> transport);

  const EngineVersion& engine() const { return m_engine; }
  ApiVersion api() const { return m_api; }

  // GET /_ping.
  std::expected<void, Error> ping();

  // GET /images/{ref}/json; not_found when the engine has no such image.
  std::expected<ImageInfo, Error> inspect_image(std::string_view ref);
  // POST /images/create?fromSrc=- with a root file-system tar (streamed from
  // the file), tagged repo:tag. Podman tags imports "<repo>:latest" whatever
  // the tag asked; the image is then tagged again (POST /images/{id}/tag).
  std::expected<ImageInfo, Error> import_image(const std::filesystem::path& rootfs_tar, std::string_view repo,
                                               std::string_view tag);
  // POST /images/create?fromImage=REPO&tag=TAG: the engine pulls `ref`
  // ("127.0.0.1:5000/nvidia/cuda:13.0.2-devel-ubuntu24.04") from its
  // registry; the pull's progress lines go to `log`. The answer is the
  // image as the engine then has it (digests holds repo@sha256:... of the
  // manifest it pulled). A registry that refuses or is unreachable is an
  // api error with the engine's message (the status is 200 either way).
  std::expected<ImageInfo, Error> pull_image(std::string_view ref, LogSink* log = nullptr,
                                             const std::atomic<bool>* cancel = nullptr);
  // POST /build with `context_dir` packed as a tar; the builder's output goes
  // to `log` as it arrives. A failed step is build_failed with the
  // builder's message (the status is 200 either way).
  std::expected<ImageInfo, Error> build_image(const std::filesystem::path& context_dir, std::string_view tag,
                                              const ImageBuildOptions& options, LogSink& log);

  // GET /images/{ref}/get: the image archive `docker save` writes, streamed
  // to `sink` as it comes (a multi-gigabyte image is never held).
  std::expected<void, Error> export_image(std::string_view ref, net::BodySink& sink,
                                          const std::atomic<bool>* cancel = nullptr);
  // POST /images/load?quiet=1 with an image archive streamed from `body`;
  // what the engine said it loaded ("Loaded image: repo:tag" lines, or
  // "Loaded image ID: sha256:..."). A refused archive is an api error with
  // the engine's message (the status is 200 either way).
  std::expected<std::vector<std::string>, Error> load_image(net::StreamedBody body);

  // POST /containers/create; the new container's ID.
  std::expected<std::string, Error> create_container(const BuildSpec& spec);
  // POST /containers/{id}/start.
  std::expected<void, Error> start_container(std::string_view id);
  // GET /containers/{id}/logs?follow=1: returns when the container's output
  // ends (it exited), when `cancel` is set (cancelled), or with the error that
  // cut the stream (engine_died when the engine went away mid-stream).
  std::expected<void, Error> follow_logs(std::string_view id, bool tty, LogSink& log,
                                         const std::atomic<bool>* cancel = nullptr);
  // GET /containers/{id}/json: State.Status ("created", "running",
  // "exited", ...).
  std::expected<std::string, Error> container_status(std::string_view id);
  // POST /containers/{id}/wait: the exit code once the container stopped.
  std::expected<int, Error> wait_container(std::string_view id, const std::atomic<bool>* cancel = nullptr);
  // POST /containers/{id}/kill (SIGKILL). A container that is not running is
  // a conflict.
  std::expected<void, Error> kill_container(std::string_view id);
  // DELETE /containers/{id}?force=1&v=1 (kills a running one first).
  std::expected<void, Error> remove_container(std::string_view id);
  // GET /containers/json?all=1 filtered by a label ("key" or "key=value").
  std::expected<std::vector<ContainerSummary>, Error> list_containers(std::string_view label);
  // GET /containers/{id}/archive?path=..., downloaded to a temporary file
  // and unpacked by extract_tar under `dest`.
  std::expected<ExtractStats, Error> copy_out(std::string_view id, std::string_view path,
                                              const std::filesystem::path& dest);

 private:
  DockerClient(std::unique_ptr<net::Transport> transport, EngineVersion engine, ApiVersion api);

  // One exchange with a versioned path; transport failures become Errors
  // that say what was being done.
  std::expected<net::Response, Error> call(net::Request request, std::string_view doing, net::BodySink* sink = nullptr);
  net::Request control(std::string method, std::string path) const;
  std::string versioned(std::string_view path) const;

  std::unique_ptr<net::Transport> m_transport;
  EngineVersion m_engine;
  ApiVersion m_api;
};

}  // namespace orc::engine
