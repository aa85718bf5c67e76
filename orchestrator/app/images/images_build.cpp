// `orchestrate images build NAME`: rootfs tar (cached) -> import through the
// engine API -> inspect -> nvcc --version in a container -> state record.
#include <chrono>
#include <optional>
#include <ostream>
#include <sstream>

#include "orchestrator/app/images/images.hpp"
#include "orchestrator/app/images/images_detail.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/imaging/offline_image.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using util::ExitCode;
using util::Failure;

namespace {

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

namespace {

double secs(std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000.0; }

const compat::OfflineImage& catalog_image(const std::string& name) {
  const compat::OfflineImage* image = compat::find_offline_image(name);
  if (image) return *image;
  const auto names = compat::offline_image_names();
  throw Failure(ExitCode::bad_input,
                {util::Diagnostic{.message = "unknown image '" + name + "' (known: " + util::join(names, ", ") + ")",
                                  .suggestion = util::did_you_mean(name, names)}});
}

fs::path setup_scripts(const compat::OfflineImage& image, const fs::path& images_dir) {
  const fs::path scripts = imaging::locate_images_dir(images_dir) / "offline";
  for (const fs::path& script : {scripts / "common.sh", scripts / image.name / "setup.sh"})
    if (!fs::is_regular_file(script))
      throw Failure(ExitCode::bad_input, "no " + script.string() +
                                             ": run from the repository root, or pass --images-dir / set "
                                             "ORCHESTRATE_IMAGES_DIR to the images/ folder");
  return scripts;
}

// The host's toolkit for the host-mount image, which serves nothing without one.
std::optional<compat::HostCuda> host_toolkit(const compat::OfflineImage& image) {
  if (!image.host_mount) return std::nullopt;
  auto host = detect_host_cuda();
  if (!host) {
    const std::string root = util::env_get("ORCHESTRATE_HOST_CUDA").value_or(std::string(compat::k_default_host_cuda));
    throw Failure(ExitCode::outside_failure, "the host has no CUDA toolkit at " + root + " (bin/nvcc): " +
                                                 image.reference() + " mounts it and would serve nothing");
  }
  return host;
}

}  // namespace

ImageBuildResult build_image(const ImageBuildRequest& request, std::ostream& progress) {
  const auto start = Clock::now();
  const compat::OfflineImage& image = catalog_image(request.name);
  const fs::path scripts = setup_scripts(image, request.images_dir);

  // The engine first: finding it missing after minutes of debootstrap helps nobody.
  auto socket = images_detail::engine_socket(request.engine_socket);
  if (!socket) throw Failure(ExitCode::outside_failure, socket.error());
  auto engine = engine::DockerEngine::connect(*socket);
  if (!engine)
    throw Failure(ExitCode::outside_failure,
                  "cannot reach the engine at " + socket->string() + ": " + engine.error().message);
  const std::optional<compat::HostCuda> host = host_toolkit(image);

  const imaging::Rootfs rootfs =
      imaging::prepare_rootfs({.image = &image,
                               .scripts = scripts,
                               .cache = request.cache_dir.value_or(cache_root() / "rootfs.v1"),
                               .mirror = request.mirror,
                               .rebuild = request.rebuild},
                              progress);
  const fs::path state_file = request.state_file.value_or(site::image_state_path());
  const std::optional<site::ImageRecord> previous = site::find_built_image(image.reference(), state_file);
  const auto present = engine->inspect_image(image.reference());
  const bool up_to_date =
      !request.rebuild && previous && previous->rootfs_key == rootfs.key && present && present->id == previous->id;
  const imaging::Imported imported = imaging::import_rootfs(*engine, image, rootfs, up_to_date, progress);

  ImageBuildResult result{.rootfs_cached = rootfs.cached,
                          .imported = imported.imported,
                          .debootstrap_s = secs(rootfs.made.debootstrap),
                          .setup_s = secs(rootfs.made.setup),
                          .tar_s = secs(rootfs.made.tar),
                          .import_s = secs(imported.took)};
  const auto nvcc_start = Clock::now();
  const std::string toolkit = imaging::nvcc_in_image(*engine, image, host);
  result.nvcc_s = since(nvcc_start);
  result.record = site::ImageRecord{.name = std::string(image.name),
                                    .reference = image.reference(),
                                    .id = imported.image.id,
                                    .digests = imported.image.digests,
                                    .created = up_to_date ? previous->created : images_detail::utc_now(),
                                    .toolkit = toolkit,
                                    .packages = rootfs.packages,
                                    .rootfs_key = rootfs.key,
                                    .engine = socket->string()};
  site::save_image_record(state_file, result.record);
  result.total_s = since(start);
  return result;
}

}  // namespace orc::app
