#pragma once
// `orchestrate images list|build`: the build images of compat's catalog that
// this project makes itself, made through the engine API from a debootstrap
// root file system.
//
// The state file (site/image_state.hpp) records what was made; <cache> is
// ORCHESTRATE_CACHE_DIR, else $XDG_CACHE_HOME/orchestrate, else
// ~/.cache/orchestrate.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/engine/answers.hpp"
#include "orchestrator/imaging/offline_image.hpp"
#include "orchestrator/imaging/tool_progress.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

// <cache> as above.
std::filesystem::path cache_root();

// The host's toolkit for the host-mount image: `ROOT/bin/nvcc --version`,
// where ROOT is ORCHESTRATE_HOST_CUDA, else /usr/local/cuda. nullopt when
// there is no nvcc there or it says nothing we can read.
std::optional<compat::HostCuda> detect_host_cuda();

struct ImagesListRequest {
  std::optional<std::filesystem::path> engine_socket;  // else discovered
  bool json = false;
};

// The engine `images list` asked, or why it could not.
struct ImagesEngine {
  std::string socket;       // empty: none found
  std::string description;  // "docker 20.10.24", when reachable
  std::string error;        // why it could not be asked; empty when reachable
  bool reachable = false;
};

// An offline image of the catalog, with what this machine knows of it.
struct OfflineImageRow {
  const compat::OfflineImage* image = nullptr;  // into compat's catalog
  std::optional<site::ImageRecord> record;      // the state file's, when built here
  std::optional<engine::ImageInfo> in_engine;   // what the engine has under its reference
};

struct ImagesReport {
  ImagesEngine engine;
  std::filesystem::path state_file;
  std::optional<compat::HostCuda> host;  // the host-mount image's toolkit
  std::vector<OfflineImageRow> offline;  // in the catalog's order
  std::span<const compat::OfficialImage> official;
  util::ExitCode exit_code = util::ExitCode::ok;
};

// The catalog (offline images with their records, official tags) and which
// offline images the engine has. An unreachable engine is reported, not
// fatal: the catalog is still worth reading.
ImagesReport list_images(const ImagesListRequest& request);

struct ImageBuildRequest {
  std::string name;                                    // catalog name or reference
  std::optional<std::filesystem::path> engine_socket;  // else discovered
  // Where the rootfs tar is written for the import (and kept with
  // keep_rootfs); default <cache>/rootfs.v1.
  std::optional<std::filesystem::path> cache_dir;
  std::optional<std::filesystem::path> state_file;  // default image_state_path()
  // The images/ folder whose offline/ holds the setup scripts: empty =
  // ORCHESTRATE_IMAGES_DIR, else the scripts compiled into the binary.
  std::filesystem::path images_dir;
  std::string mirror;                 // empty = ORCHESTRATE_DEBIAN_MIRROR, else the host's apt sources
  bool rebuild = false;               // make the tree and import again, whatever the engine and a kept tar have
  bool keep_rootfs = false;           // keep the rootfs tar after the import (a rebuild then skips debootstrap)
  imaging::ProgressOptions progress;  // debootstrap's and apt's progress: lines, or a live line
};

struct ImageBuildResult {
  site::ImageRecord record;
  // Where the setup scripts came from: "compiled in" or a folder.
  std::string scripts;
  // No debootstrap this time: a tar kept by --keep-rootfs, or the engine had the image.
  bool rootfs_cached = false;
  bool imported = false;  // false when the engine already had this very image
  double debootstrap_s = 0, setup_s = 0, tar_s = 0, import_s = 0, nvcc_s = 0, total_s = 0;
  std::uint64_t engine_bytes = 0;  // the image's size as the engine reports it
  std::uintmax_t tar_bytes = 0;    // the rootfs tar imported; 0 when none was
  std::filesystem::path cache_dir;
  imaging::CacheLeft cache;  // the image's rootfs files kept in cache_dir, and those removed
  util::ExitCode exit_code = util::ExitCode::ok;
};

// Builds (or finds up to date) one offline image; progress lines go to
// `progress`. Throws util::Failure: bad_input for an unknown name (with a
// did-you-mean) or missing setup scripts; outside_failure for no engine,
// debootstrap (naming the mirror), the chroot, the import; check_failed
// when nvcc in the image is not the catalog's toolkit.
ImageBuildResult build_image(const ImageBuildRequest& request, std::ostream& progress);

}  // namespace orc::app
