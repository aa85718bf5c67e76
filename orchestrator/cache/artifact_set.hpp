#pragma once
// The two halves of a build's use of the store, strung together so app/build
// calls one function each way:
//   store_artifact_set: files, log, manifest, signature (and a pack) in as
//     blobs, then the index row naming them, all under one Pin;
//   load_artifact_set: the manifest back, its digest re-checked, parsed,
//     and its signature verified against the trusted keys.
#include <expected>
#include <filesystem>
#include <vector>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/index.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/cache/store.hpp"

namespace orc::cache {

struct NewArtifactSet {
  // files[i].path and the archs filled by the caller; sha256 and size are
  // set here from the bytes stored. created is set to now when empty.
  Manifest manifest;
  std::vector<std::filesystem::path> sources;  // the file of manifest.files[i]
  std::vector<unsigned> modes;                 // its permission bits; empty: the sources' own
  std::filesystem::path build_log;             // empty: none
  const SigningKey* key = nullptr;             // null: stored unsigned
  bool verified = false;                       // the caller checked the archs (and signs)
  bool pack = false;                           // also store the files as one tar+zstd blob
};

// Returns the row recorded; its manifest is the digest of the canonical bytes.
std::expected<IndexEntry, Error> store_artifact_set(Store& store, NewArtifactSet set);

struct LoadedSet {
  Manifest manifest;
  Verification signature;
};

// not_found when the manifest is not a schema this version reads (a miss),
// corrupt when its bytes or any file blob fail their digest or are gone.
std::expected<LoadedSet, Error> load_artifact_set(const Store& store, const IndexEntry& entry,
                                                  const TrustedKeys& trusted);

}  // namespace orc::cache
