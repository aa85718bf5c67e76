#pragma once
// Smoke results attached to artifact sets of the local store. `orchestrate
// smoke TIER --artifact sha256:PREFIX` loads every fatbin the set's files
// embed on this machine's GPUs; the outcome per GPU then goes into the
// set's manifest (its `smoke` object, under the tier) and the manifest is
// stored again, signed: a new artifact set with the same files, newer than
// the one it supersedes, so `fetch` (and `fetch --require-smoke`) find it.
// Each GPU's run is recorded with this node's hostname and key and signed by
// that key on its own (cache/smoke_run.hpp), marked as not a GPU of the tier
// where its CC is none of the tier's; it replaces only the earlier run of
// this node on that GPU, so the runs of every node that smoked the set
// accumulate, each vouched for by the node that ran it.
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/cache/index.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/recipe/config.hpp"
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

// The node whose smoke runs are attested: who ran them, and the key that
// signs each run and the new manifest.
struct AttestingNode {
  std::string host;  // node_hostname()
  const cache::SigningKey& key;
};

// The set's manifest with a run per GPU of `result` recorded under `tier`
// (each in place of `node`'s earlier run on that GPU, other runs kept),
// stored signed by node.key as a new set, which becomes the current set of
// its recipe x tier when the attested one was. Returns the new manifest's
// digest.
digest::Digest attest_artifact_set(cache::Store& store, const AttestTarget& target, const smoke::SmokeResult& result,
                                   const recipe::Tier& tier, const AttestingNode& node);

}  // namespace orc::app
