#pragma once
// Artifact sets between a local store (orc::cache) and an OCI repository
// (orc::registry). How a set looks in the registry (config, layer,
// annotations, tags, signature referrer) is described once, in
// docs/remote.md ("Registry layout"); registry/layout.hpp builds and reads it.
//
// Push uploads blobs (HEAD first), then the artifact manifest by its own tag,
// then the signature, and moves the <recipe>--<tier> tag last, so a fetch by
// tier never finds a set whose signature is not there yet. Pull checks the
// signature and the arch coverage on the small blobs before the large one is
// downloaded, verifies every digest while reading, unpacks the layer with the
// safe unpacker, checks every file against the manifest, and records the
// index row only when every blob is in.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/app/transfer/transfer_progress.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/registry/client.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

struct TransferError {
  util::ExitCode code = util::ExitCode::outside_failure;
  std::string message;
};

// A step's failure, as the steps below return it.
inline std::unexpected<TransferError> transfer_failed(util::ExitCode code, std::string message) {
  return std::unexpected(TransferError{code, std::move(message)});
}

// Removes what a pull put in tmp/ on every way out.
struct TempPaths {
  std::vector<std::filesystem::path> paths;
  ~TempPaths() {
    std::error_code ec;
    for (const auto& p : paths) std::filesystem::remove_all(p, ec);
  }
};

// The exit code and message of a registry failure (remote.hpp's mapping)
// and of a store failure (io 3, corrupt 1, the rest 2).
TransferError from_registry(const registry::Error& error);
TransferError from_cache(const cache::Error& error);

// What push uploads for one set: the canonical manifest bytes, the signature
// document (empty: unsigned) and the pack file, or instead of the file the
// layer the registry was just seen to hold (digest and size).
struct SetBlobs {
  std::string manifest;
  std::string signature;
  std::filesystem::path pack;
  std::optional<cache::PackedLayer> held_layer;
  // The current set of its recipe x tier (cache/current.hpp): the moving tag
  // <recipe>--<tier> is put on it whatever the time of the set it named.
  // Else the tag moves only to a set newer by time.
  bool current = false;
};

struct PushedSet {
  digest::Digest artifact_digest;  // of the OCI artifact manifest
  std::string tag;
  std::size_t uploaded = 0;  // blobs sent
  std::size_t skipped = 0;   // blobs the registry had
  bool moved_latest = false;
  // The set <recipe>--<tier> named before, when another one.
  std::optional<digest::Digest> previous_latest;
  cache::PackedLayer layer;  // the layer the artifact manifest names
};

// Pushes the blobs of `set` and its manifests (the layout above). Exposed on
// its own so tests can push crafted sets that no store would hold.
std::expected<PushedSet, TransferError> push_blobs(registry::Client& client, const SetBlobs& set,
                                                   const TransferProgress& progress);

// Pushes one set of the store; packs it first (and records the pack) when
// the build stored it without one.
std::expected<PushedSet, TransferError> push_set(cache::Store& store, registry::Client& client,
                                                 const cache::IndexEntry& entry, const TransferProgress& progress,
                                                 bool current = false);

// An artifact set found in the remote.
struct RemoteSet {
  digest::Digest artifact_digest;
  registry::Manifest manifest;
  registry::ArtifactInfo info;
  digest::Digest set_digest;  // the config digest: the set's identity
};

// The user's --digest, parsed where it enters: exit 2 with what is wrong
// with it ("--digest: ...").
digest::DigestPrefix digest_argument(const std::string& text);

// The newest set of recipe x tier (`digest` empty), or the one whose manifest
// digest starts with `digest` ("sha256:" optional; digest_argument's rules).
// not found / ambiguous are exit 2, a registry that fails exit 3.
std::expected<RemoteSet, TransferError> find_remote_set(registry::Client& client, const std::string& recipe,
                                                        const std::string& tier, const std::string& digest);

// With --require-smoke and no digest: the newest set of recipe x tier (by
// its created annotation) whose manifest passes smoke_problem for the tier
// (arch_coverage.hpp: a passing run, signed by a trusted key, on every CC of
// the tier); each candidate's manifest (the small config blob) is read
// through `temp`. None: exit 1, naming what to run on the newest.
// `tier` null: each set is judged against the tier its manifest records.
std::expected<RemoteSet, TransferError> find_smoked_remote_set(registry::Client& client, const std::string& recipe,
                                                               const std::string& tier_name, const recipe::Tier* tier,
                                                               const cache::TrustedKeys& trusted,
                                                               const std::filesystem::path& temp);

// The set a pull or fetch asks for: the newest smoked one with
// --require-smoke and no --digest (candidates read through `temp`), else
// find_remote_set's.
std::expected<RemoteSet, TransferError> find_requested_set(registry::Client& client, const TransferRequest& request,
                                                           const recipe::Tier* tier, const cache::TrustedKeys& trusted,
                                                           const std::filesystem::path& temp);

struct PullOptions {
  const cache::TrustedKeys* trusted = nullptr;
  const recipe::Tier* tier = nullptr;  // null: archs not checked (row unverified), unless recorded_tier
  // With no tier: judge the set against the tier its signed manifest
  // records (built_for; fetch without a configuration), refusing a set
  // that records none.
  bool recorded_tier = false;
  bool insecure = false;       // a signature that does not verify is kept, not refused
  bool require_smoke = false;  // refuse a set without a passing smoke attestation for *tier
  std::string key;             // refuse a set whose signed manifest is for another cache key; empty: any
  // fetch's DIR: filled from the same pass over the layer as the store (it
  // must not exist, or be empty). Empty: the store only (pull).
  std::filesystem::path dir;
};

struct PulledSet {
  cache::IndexEntry entry;
  bool downloaded = false;  // false: another process (or an earlier run) had stored it
  cache::Verification signature;
  std::vector<cache::UnpackedFile> files;  // the layer's files (names, modes, digests), when downloaded
};

// Pulls `set` into the store (and options.dir, from the same pass).
// Concurrent pulls of one set queue on a lock in the store, so one downloads
// and the others find it stored; a broken connection is resumed in this
// process (Range); a pull killed mid-download leaves private trees that gc
// (and the next unpack beside DIR) removes, and the next pull starts over.
std::expected<PulledSet, TransferError> pull_set(cache::Store& store, registry::Client& client, const RemoteSet& set,
                                                 const PullOptions& options, const TransferProgress& progress);

}  // namespace orc::app
