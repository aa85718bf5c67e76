// `orchestrate images build NAME`: the key of the image's inputs -> (unless
// the engine has the image of that key) rootfs tar -> import through the
// engine API -> tar removed unless kept -> nvcc --version in a container ->
// state record.
#include <chrono>
#include <optional>
#include <ostream>
#include <sstream>

#include "orchestrator/app/images/images.hpp"
#include "orchestrator/app/images/images_detail.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/imaging/offline_image.hpp"
#include "orchestrator/imaging/setup_scripts.hpp"
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
  const imaging::SetupScripts scripts = imaging::setup_scripts(image, request.images_dir);

  // The engine first: finding it missing after minutes of debootstrap helps nobody.
  auto socket = images_detail::engine_socket(request.engine_socket);
  if (!socket) throw Failure(ExitCode::outside_failure, socket.error());
  auto engine = engine::DockerEngine::connect(*socket);
  if (!engine)
    throw Failure(ExitCode::outside_failure,
                  "cannot reach the engine at " + socket->string() + ": " + engine.error().message);
  const std::optional<compat::HostCuda> host = host_toolkit(image);

  const imaging::RootfsRequest rootfs{.image = &image,
                                      .scripts = &scripts,
                                      .key = imaging::rootfs_key(image, scripts),
                                      .cache = request.cache_dir.value_or(cache_root() / "rootfs.v1"),
                                      .mirror = request.mirror,
                                      .rebuild = request.rebuild,
                                      .keep = request.keep_rootfs,
                                      .progress = request.progress};
  progress << "images: " << image.reference() << " from the setup scripts " << scripts.origin << " (key "
           << rootfs.key.substr(0, 16) << ")" << std::endl;
  const fs::path state_file = request.state_file.value_or(site::image_state_path());
  const std::optional<site::ImageRecord> previous = site::find_built_image(image.reference(), state_file);
  const auto present = engine->inspect_image(image.reference());
  const bool up_to_date =
      !request.rebuild && previous && previous->rootfs_key == rootfs.key && present && present->id == previous->id;

  ImageBuildResult result{.scripts = scripts.origin, .rootfs_cached = true, .cache_dir = rootfs.cache};
  engine::ImageInfo info;
  std::vector<std::string> packages;
  if (up_to_date) {
    progress << "images: " << image.reference() << " is up to date in the engine" << std::endl;
    info = *present;
    packages = previous->packages;
    result.cache = imaging::tidy_rootfs_cache(rootfs, progress);
  } else {
    imaging::Imported imported = imaging::import_offline_image(*engine, rootfs, progress);
    info = std::move(imported.image);
    packages = std::move(imported.packages);
    result.rootfs_cached = imported.from_kept_tar;
    result.imported = true;
    result.debootstrap_s = secs(imported.made.debootstrap);
    result.setup_s = secs(imported.made.setup);
    result.tar_s = secs(imported.made.tar);
    result.import_s = secs(imported.took);
    result.tar_bytes = imported.tar_bytes;
    result.cache = std::move(imported.cache);
  }
  result.engine_bytes = info.size;

  const auto nvcc_start = Clock::now();
  const std::string toolkit = imaging::nvcc_in_image(*engine, image, host);
  result.nvcc_s = since(nvcc_start);
  result.record = site::ImageRecord{.name = std::string(image.name),
                                    .reference = image.reference(),
                                    .id = info.id,
                                    .digests = info.digests,
                                    .created = up_to_date ? previous->created : images_detail::utc_now(),
                                    .toolkit = toolkit,
                                    .packages = std::move(packages),
                                    .rootfs_key = rootfs.key,
                                    .engine = socket->string()};
  site::save_image_record(state_file, result.record);
  result.total_s = since(start);
  return result;
}

}  // namespace orc::app
