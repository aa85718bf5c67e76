#pragma once
// The steps of making one offline build image, for the `images build` use
// case: the key of what decides its content, the rootfs tar (a file for the
// import, kept only when asked), the import through the engine API, and the
// check that nvcc in a container of the image is the catalog's toolkit.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/engine/answers.hpp"
#include "orchestrator/imaging/rootfs.hpp"
#include "orchestrator/imaging/setup_scripts.hpp"

namespace orc::engine {
class DockerEngine;
}

namespace orc::imaging {

// The rootfs key: every input that decides the tree's content, as typed,
// delimited fields (the mirror is not one: a suite's packages are the same
// from any mirror of the same snapshot). The scripts count by their bytes,
// so compiled-in and read-from-a-folder copies of them give the same key.
std::string rootfs_key(const compat::OfflineImage& image, const SetupScripts& scripts);

struct RootfsRequest {
  const compat::OfflineImage* image = nullptr;
  const SetupScripts* scripts = nullptr;
  std::string key;              // rootfs_key(*image, *scripts)
  std::filesystem::path cache;  // where the tar is made, and kept with `keep`
  std::string mirror;           // empty = debian_mirror()
  bool rebuild = false;         // make the tree again even when a kept tar has the key
  bool keep = false;            // keep the tar after the import (--keep-rootfs)
  ProgressOptions progress;     // how debootstrap's and apt's progress is shown
};

// A file a build left in the cache folder, or removed from it.
struct CachedFile {
  std::filesystem::path path;
  std::uintmax_t bytes = 0;
};

// The rootfs tars (and their package lists and logs) of one image in the
// cache folder after a build: what stays, what went.
struct CacheLeft {
  std::vector<CachedFile> kept;     // the key's tar and its files, with `keep`
  std::vector<CachedFile> removed;  // everything else of the image's
};

struct Imported {
  engine::ImageInfo image;
  std::vector<std::string> packages;  // "name=version"
  bool from_kept_tar = false;         // a tar kept by an earlier --keep-rootfs: no debootstrap
  RootfsResult made;                  // the steps' times when made
  std::chrono::milliseconds took{0};  // the import
  std::uintmax_t tar_bytes = 0;
  CacheLeft cache;
};

// Under a lock of the image in the cache folder (a second build of it
// waits): the kept tar of the key, else a fresh one (needs root and a
// mirror), imported through the engine API as the image's reference. Then
// the tar goes unless `keep`, and other keys' tars of the image go either
// way. Throws util::Failure: outside_failure when a step or the engine fails.
Imported import_offline_image(engine::DockerEngine& engine, const RootfsRequest& request, std::ostream& progress);

// For an image the engine has already: the image's files in the cache
// folder other than the key's kept ones removed (all of them without `keep`).
CacheLeft tidy_rootfs_cache(const RootfsRequest& request, std::ostream& progress);

// `nvcc --version` in a container of the image, with no network; the
// host-mount image gets `host`'s toolkit mounted read-only. The version it
// printed; throws util::Failure: outside_failure when the engine fails,
// check_failed when nvcc fails or is not the catalog's toolkit.
std::string nvcc_in_image(engine::DockerEngine& engine, const compat::OfflineImage& image,
                          const std::optional<compat::HostCuda>& host);

}  // namespace orc::imaging
