#pragma once
// The steps of making one offline build image, for the `images build` use
// case: where the setup scripts are, the rootfs tar (cached by a key of what
// decides its content), the import through the engine API, and the check
// that nvcc in a container of the image is the catalog's toolkit.
#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/engine/answers.hpp"
#include "orchestrator/imaging/rootfs.hpp"

namespace orc::engine {
class DockerEngine;
}

namespace orc::imaging {

// images/ beside the sources: `given`, ORCHESTRATE_IMAGES_DIR, ./images, or
// next to the executable (a build tree's ../images, an install's share/).
std::filesystem::path locate_images_dir(const std::filesystem::path& given);

// The rootfs key: every input that decides the tree's content, as typed,
// delimited fields (the mirror is not one: a suite's packages are the same
// from any mirror of the same snapshot). `scripts` is images/offline.
std::string rootfs_key(const compat::OfflineImage& image, const std::filesystem::path& scripts);

struct RootfsRequest {
  const compat::OfflineImage* image = nullptr;
  std::filesystem::path scripts;  // images/offline
  std::filesystem::path cache;    // the tars' folder
  std::string mirror;             // empty = debian_mirror()
  bool rebuild = false;           // ignore a cached tar
};

struct Rootfs {
  std::string key;
  std::filesystem::path tar;
  std::vector<std::string> packages;  // "name=version"
  bool cached = false;                // no debootstrap this time
  RootfsResult made;                  // the steps' times when made
};

// The cached tar of the request's key, else a fresh one (needs root and a
// mirror); the tars of other keys of the image are removed. A lock file
// makes a second build of the same image wait, then find the tar made.
Rootfs prepare_rootfs(const RootfsRequest& request, std::ostream& progress);

struct Imported {
  engine::ImageInfo image;
  bool imported = false;  // false: the engine had it already
  std::chrono::milliseconds took{0};
};

// `reference` in the engine: as it is when `current` is, else imported from
// the tar. Throws util::Failure (outside_failure) when the engine fails.
Imported import_rootfs(engine::DockerEngine& engine, const compat::OfflineImage& image, const Rootfs& rootfs,
                       bool current, std::ostream& progress);

// `nvcc --version` in a container of the image, with no network; the
// host-mount image gets `host`'s toolkit mounted read-only. The version it
// printed; throws util::Failure: outside_failure when the engine fails,
// check_failed when nvcc fails or is not the catalog's toolkit.
std::string nvcc_in_image(engine::DockerEngine& engine, const compat::OfflineImage& image,
                          const std::optional<compat::HostCuda>& host);

}  // namespace orc::imaging
