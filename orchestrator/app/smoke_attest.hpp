#pragma once
// Smoke results attached to artifact sets of the local store. `orchestrate
// smoke TIER --artifact sha256:PREFIX` loads every fatbin the set's files
// embed on this machine's GPUs; the outcome per GPU then goes into the
// set's manifest (its `smoke` object, under the tier) and the manifest is
// stored again, signed: a new artifact set with the same files, newer than
// the one it supersedes, so `fetch` (and `fetch --require-smoke`) find it.
// The attestation is part of the signed manifest, so it cannot be added or
// changed without the signer's key.
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/cache/index.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/smoke/result.hpp"

namespace orc::app {

struct AttestTarget {
  cache::IndexEntry entry;
  std::vector<std::filesystem::path> files;  // the set's file blobs, in manifest order
};

// Whether an --artifact argument names a stored set ("sha256:ab12...", or
// hex of at least 4 digits) rather than a file.
bool names_artifact_set(const std::string& argument);

// The set a digest prefix names; throws util::Failure (bad_input) when none
// or several do, or (outside_failure) when the store fails.
AttestTarget resolve_artifact_set(const cache::Store& store, const std::string& prefix);

// The set's manifest with `result`'s GPUs recorded under `tier` (replacing
// an earlier attestation for that tier), stored signed by `key` as a new
// set. Returns the new manifest's hex digest.
std::string attest_artifact_set(cache::Store& store, const AttestTarget& target, const smoke::SmokeResult& result,
                                const std::string& tier, const cache::SigningKey* key);

}  // namespace orc::app
