#pragma once
// The two halves of a build's use of the store, strung together so app/build
// calls one function each way:
//   store_artifact_set: files, log, manifest and signature in as blobs,
//     then the index row naming them, all under one Pin;
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
};

// Returns the row recorded; its manifest is the digest of the canonical bytes.
// No pack is stored beside the files: push makes the layer from them
// (pack_stored_set), so the store holds each byte once.
std::expected<IndexEntry, Error> store_artifact_set(Store& store, NewArtifactSet set);

// The index row a manifest makes (its files at mode 0644, unsigned,
// unverified): the fields the manifest itself says, created from its
// `created`.
IndexEntry index_entry(const Manifest& manifest, const digest::Digest& digest);

// Packs the set's file blobs, with the modes its row keeps, into `out`: the
// layer push sends. pack() is deterministic, so the same files and modes
// make the same bytes on every run.
std::expected<void, Error> pack_stored_set(const Store& store, const IndexEntry& entry,
                                           const std::filesystem::path& out);

// What decides the bytes of that pack: the SHA-256 of each file's path,
// digest and mode, in path order. Index::packed_layer() is keyed by it.
std::string pack_key(const IndexEntry& entry);

struct LoadedSet {
  Manifest manifest;
  Verification signature;
};

// not_found when the manifest is not a schema this version reads (a miss),
// corrupt when its bytes or any file blob fail their digest or are gone.
std::expected<LoadedSet, Error> load_artifact_set(const Store& store, const IndexEntry& entry,
                                                  const TrustedKeys& trusted);

}  // namespace orc::cache
