#pragma once
// What `orchestrate images build` recorded about the build images it made,
// read by images (list) and by build (an offline image's ID is part of the
// cache key; an image never built is an error that says how to build it).
//
// The state file: <cache>/images.v1.json, where <cache> is ORCHESTRATE_CACHE_DIR,
// else $XDG_CACHE_HOME/orchestrate, else ~/.cache/orchestrate:
//   {"schema": "orchestrate.images.v1",
//    "images": [{"name": "11.8-bookworm", "reference": "orchestrate/cuda:11.8-bookworm",
//                "id": "sha256:...", "digests": [], "created": "2026-11-30T10:00:00Z",
//                "toolkit": "11.8.89", "packages": ["nvidia-cuda-toolkit=11.8.89~11.8.0-5~deb12u1", ...],
//                "rootfs_key": "<sha256 of suite, components, packages, scripts>",
//                "engine": "/path/of/the/engine.sock",
//                "pushed": "127.0.0.1:5000/team/artifacts/orchestrate/cuda@sha256:..."}]}
// One record per reference, the latest build's. Written to a temp file,
// fsynced and renamed; a file of another schema or that does not parse reads
// as empty (a cache miss, never a crash).
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace orc::site {

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
  // Where `images push` put this very image: "HOST[:PORT]/REPO@sha256:..."
  // (the remote's host and repository, no credentials); empty: not pushed.
  std::string pushed;
};

std::filesystem::path image_state_path();

std::vector<ImageRecord> read_image_state(const std::filesystem::path& file);
// Replaces the record of the same reference (or adds it), atomically.
void save_image_record(const std::filesystem::path& file, const ImageRecord& record);

// The record of an image built here, by reference ("orchestrate/cuda:11.8-bookworm")
// or catalog name ("11.8-bookworm"), from the default state file; for the
// build pipeline, which needs the image ID for its cache key.
std::optional<ImageRecord> find_built_image(const std::string& reference);
std::optional<ImageRecord> find_built_image(const std::string& reference, const std::filesystem::path& state_file);

// A record as the state file holds it, and as `images list --json` shows it.
nlohmann::ordered_json image_record_json(const ImageRecord& record);

}  // namespace orc::site
