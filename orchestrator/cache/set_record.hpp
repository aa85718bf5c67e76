#pragma once
// What `fetch` leaves in the directory it unpacks a set into, so that the
// directory says which set it holds (`inspect DIR` judges each set against
// its own tier):
//   DIR/.orchestrate/set.v1/manifest.json   the manifest's canonical bytes, as
//                                           stored and signed (manifest.hpp)
//   DIR/.orchestrate/set.v1/signature.json  its detached signature document
//                                           (signing.hpp); absent for a set
//                                           fetched unsigned (--insecure)
// The bytes are the store's, so the digest and the signature check here as
// they do in the store. The version is in the folder's name: a reader that
// finds another version finds no record (the directory is plain files).
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/digest/digest.hpp"

namespace orc::cache {

// ".orchestrate/set.v1", relative to DIR.
inline constexpr std::string_view k_set_record_dir = ".orchestrate/set.v1";

// Writes the record into `dir` (each file atomically). `invalid` when the
// set itself holds a file where the record goes (nothing is replaced).
std::expected<void, Error> write_set_record(const std::filesystem::path& dir, std::string_view manifest_bytes,
                                            const std::optional<std::string>& signature);

struct SetRecord {
  Manifest manifest;
  digest::Digest digest;   // of the manifest's bytes: the set's name
  Verification signature;  // against the trusted keys given
};

// nullopt when `dir` holds no record; `invalid` for a record whose manifest
// is not one this version reads (with the reason), `io` when it cannot be read.
std::expected<std::optional<SetRecord>, Error> read_set_record(const std::filesystem::path& dir,
                                                               const TrustedKeys& trusted);

}  // namespace orc::cache
