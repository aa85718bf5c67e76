#pragma once
// `orchestrate images list|build`: the build images of compat's catalog that
// this project makes itself, made through the engine API from a debootstrap
// root file system, and the state file that records what was made.
//
// State file: <cache>/images.v1.json, where <cache> is ORCHESTRATE_CACHE_DIR,
// else $XDG_CACHE_HOME/orchestrate, else ~/.cache/orchestrate:
//   {"schema": "orchestrate.images.v1",
//    "images": [{"name": "11.8-bookworm", "reference": "orchestrate/cuda:11.8-bookworm",
//                "id": "sha256:...", "digests": [], "created": "2026-11-30T10:00:00Z",
//                "toolkit": "11.8.89", "packages": ["nvidia-cuda-toolkit=11.8.89~11.8.0-5~deb12u1", ...],
//                "rootfs_key": "<sha256 of suite, components, packages, scripts>",
//                "engine": "/path/of/the/engine.sock"}]}
// One record per reference, the latest build's. Written to a temp file,
// fsynced and renamed; a file of another schema or that does not parse reads
// as empty (a cache miss, never a crash).
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/engine/answers.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

struct ImageRecord {
  std::string name;                  // "11.8-bookworm"
  std::string reference;             // "orchestrate/cuda:11.8-bookworm"
  std::string id;                    // the engine's image ID, "sha256:..."
  std::vector<std::string> digests;  // repo digests (empty for an imported image)
  std::string created;               // UTC, RFC 3339
  // What `nvcc --version` said in a container of the image (network none;
  // the host's toolkit mounted for the host-mount image): "11.8.89".
  std::string toolkit;
  std::vector<std::string> packages;  // "name=version" of the catalog's packages
  std::string rootfs_key;
  std::string engine;  // the socket of the engine it was imported into
};

// <cache> as above.
std::filesystem::path cache_root();
std::filesystem::path image_state_path();

std::vector<ImageRecord> read_image_state(const std::filesystem::path& file);
// Replaces the record of the same reference (or adds it), atomically.
void save_image_record(const std::filesystem::path& file, const ImageRecord& record);

// The record of an image built here, by reference ("orchestrate/cuda:11.8-bookworm")
// or catalog name ("11.8-bookworm"), from the default state file; for the
// build pipeline, which needs the image ID for its cache key.
std::optional<ImageRecord> find_built_image(const std::string& reference);
std::optional<ImageRecord> find_built_image(const std::string& reference, const std::filesystem::path& state_file);

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
  std::optional<ImageRecord> record;            // the state file's, when built here
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

// A record as the state file holds it, and as `images list --json` shows it.
nlohmann::ordered_json image_record_json(const ImageRecord& record);

struct ImageBuildRequest {
  std::string name;                                    // catalog name or reference
  std::optional<std::filesystem::path> engine_socket;  // else discovered
  std::optional<std::filesystem::path> cache_dir;      // rootfs tars; default <cache>/rootfs.v1
  std::optional<std::filesystem::path> state_file;     // default image_state_path()
  // Where images/offline/ is: empty = ORCHESTRATE_IMAGES_DIR, ./images, or
  // beside the executable (../images, ../share/orchestrate/images).
  std::filesystem::path images_dir;
  std::string mirror;    // empty = ORCHESTRATE_DEBIAN_MIRROR, else the host's apt sources
  bool rebuild = false;  // ignore a cached rootfs tar
};

struct ImageBuildResult {
  ImageRecord record;
  bool rootfs_cached = false;  // the tar came from the cache: no debootstrap
  bool imported = false;       // false when the engine already had this very image
  double debootstrap_s = 0, setup_s = 0, tar_s = 0, import_s = 0, nvcc_s = 0, total_s = 0;
  util::ExitCode exit_code = util::ExitCode::ok;
};

// Builds (or finds up to date) one offline image; progress lines go to
// `progress`. Throws util::Failure: bad_input for an unknown name (with a
// did-you-mean) or missing setup scripts; outside_failure for no engine,
// debootstrap (naming the mirror), the chroot, the import; check_failed
// when nvcc in the image is not the catalog's toolkit.
ImageBuildResult build_image(const ImageBuildRequest& request, std::ostream& progress);

}  // namespace orc::app
