#include "orchestrator/app/images/images.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "orchestrator/app/images/images_detail.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

// What the engine has under an offline image's reference.
struct EngineView {
  std::string socket;
  std::string description;  // "docker 20.10.24"
  std::string error;        // why we could not ask
  std::optional<engine::DockerEngine> engine;
};

EngineView open_engine(const std::optional<fs::path>& given) {
  EngineView view;
  auto socket = images_detail::engine_socket(given);
  if (!socket) {
    view.error = socket.error();
    return view;
  }
  view.socket = socket->string();
  auto connected = engine::DockerEngine::connect(*socket);
  if (!connected) {
    view.error = "cannot reach the engine at " + view.socket + ": " + connected.error().message;
    return view;
  }
  view.description = std::string(connected->name()) + " " + connected->client().engine().version;
  view.engine.emplace(std::move(*connected));
  return view;
}

}  // namespace

namespace images_detail {

std::expected<fs::path, std::string> engine_socket(const std::optional<fs::path>& given) {
  if (given && !given->empty()) return *given;
  auto found = engine::discover_engine(std::nullopt);
  if (!found) return std::unexpected(found.error().message);
  if (found->kind == engine::EngineKind::host)
    return std::unexpected("no container engine socket found (looked at " + util::join(found->looked_at, ", ") +
                           "); start dockerd (scripts/start-dockerd.sh) or pass --engine-socket PATH");
  return found->socket;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace images_detail

fs::path cache_root() { return cache::default_store_root(); }

std::optional<compat::HostCuda> detect_host_cuda() {
  std::string root = util::env_value("ORCHESTRATE_HOST_CUDA");
  if (root.empty()) root = std::string(compat::k_default_host_cuda);
  const fs::path nvcc = fs::path(root) / "bin" / "nvcc";
  if (::access(nvcc.c_str(), X_OK) != 0) return std::nullopt;
  const auto ran = util::run_process({.argv = {nvcc.string(), "--version"}, .merge_stderr = true});
  if (!ran || !ran->ok()) return std::nullopt;
  auto version = compat::parse_nvcc_version(ran->out);
  if (!version) return std::nullopt;
  return compat::HostCuda{.toolkit = *version, .root = root};
}

ImagesReport list_images(const ImagesListRequest& request) {
  EngineView view = open_engine(request.engine_socket);
  const std::vector<site::ImageRecord> records = site::read_image_state(site::image_state_path());
  ImagesReport report{.engine = {.socket = view.socket,
                                 .description = view.description,
                                 .error = view.error,
                                 .reachable = view.engine.has_value()},
                      .state_file = site::image_state_path(),
                      .host = detect_host_cuda(),
                      .offline = {},
                      .official = compat::official_images()};
  for (const compat::OfflineImage& image : compat::offline_images()) {
    OfflineImageRow row{.image = &image, .record = std::nullopt, .in_engine = std::nullopt};
    for (const auto& r : records)
      if (r.reference == image.reference()) row.record = r;
    if (view.engine)
      if (auto info = view.engine->inspect_image(image.reference())) row.in_engine = *info;
    report.offline.push_back(std::move(row));
  }
  return report;
}

}  // namespace orc::app
