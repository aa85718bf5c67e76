#pragma once
// `orchestrate push` and `orchestrate pull`: artifact sets between the local
// store (ORCHESTRATE_CACHE_DIR) and the remote (ORCHESTRATE_REMOTE, else the
// configuration's `remote:`), with what fetch shares: the tier lookup and the
// remote (the configuration and the trusted keys come from site/).
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/app/transfer/transfer_progress.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/digest/digest.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

struct TransferRequest {
  std::filesystem::path config;      // orchestrate.yaml (locate_config's answer)
  bool config_named = false;         // by -f or ORCHESTRATE_CONFIG: then it must be there
  std::filesystem::path store_root;  // empty: cache::default_store_root()
  std::string recipe;
  std::string tier;
  std::string digest;  // a manifest digest or unique prefix, "sha256:" optional
  // pull: only a set whose signed manifest was built for this cache key (a
  // Slurm job's build names its key and set; the key is what is trusted).
  std::string key;
  bool all = false;  // push: every set in the store
  bool insecure = false;
  bool require_smoke = false;  // fetch, pull: only a set attesting a passing smoke run for the tier
  bool json = false;
  registry::DeadlinePolicy deadlines;  // of each registry operation (--timeout, --min-rate)
  std::ostream* progress = nullptr;    // live transfer lines (stderr); null: none
  Terminal terminal = Terminal::no;
};

// The tier named, or util::Failure (bad input) with a did-you-mean.
const recipe::Tier& find_tier(const recipe::Config& config, const std::string& name);
// The remote, or util::Failure (bad input) saying how to name one.
site::RemoteChoice require_remote(const recipe::Config* config, std::string_view why);

// The warning --insecure gives on every use (stderr, and fetch's JSON),
// whether or not the signature would have verified, so a script that keeps
// the flag is seen; insecure_warning is the line it prints.
util::Diagnostic insecure_diagnostic(const digest::Digest& manifest, const cache::Verification& signature);
std::string insecure_warning(const digest::Digest& manifest, const cache::Verification& signature);

// One set a push sent.
struct PushedEntry {
  std::string recipe;
  std::string tier;
  digest::Digest manifest;  // the set's manifest digest
  digest::Digest artifact;  // the OCI artifact manifest's digest
  std::string tag;          // <recipe>--<tier>--<16 hex>
  std::size_t uploaded = 0;
  std::size_t skipped = 0;
  bool moved_latest = false;               // <recipe>--<tier> now names it
  bool current = false;                    // it is the current set of recipe x tier (the tag was put on it)
  std::optional<digest::Digest> newer;     // a verified set newer by time than the current one
  std::optional<digest::Digest> previous;  // the set <recipe>--<tier> named before, when another
};

struct PushReport {
  std::string remote;  // its URL, without credentials
  std::vector<PushedEntry> pushed;
  util::ExitCode exit_code = util::ExitCode::ok;
};

struct PullReport {
  std::string recipe;
  std::string tier;
  digest::Digest manifest;
  bool downloaded = false;                 // false: the store had it already
  bool verified = false;                   // the index row: signature and archs checked
  std::vector<util::Diagnostic> warnings;  // --insecure's, for stderr
  util::ExitCode exit_code = util::ExitCode::ok;
};

// What `--remote` retention removed from the registry.
struct PruneReport {
  struct Removed {
    std::string recipe;
    std::string tier;
    digest::Digest artifact;  // the artifact manifest's digest
    std::string created;
  };
  std::string remote;  // its URL, without credentials
  std::vector<Removed> removed;
  std::size_t kept = 0;
  std::string error;  // the registry failed, or refuses deletes
  util::ExitCode exit_code = util::ExitCode::ok;
};

// Keeps the newest `keep` sets of each recipe x tier of the configuration in
// its remote and deletes the older ones (transfer_prune.cpp). Throws
// util::Failure (bad input) without a remote or with keep 0.
PruneReport prune_remote(const std::filesystem::path& config, std::size_t keep);

// Exit 0, 2 (nothing to push, no remote), 3 (the registry failed).
PushReport push(const TransferRequest& request);

// `orchestrate promote RECIPE --tier T --digest D`: D becomes the current
// set of RECIPE x T (cache/current.hpp) on the remote, when one is
// configured (pushed, and <recipe>--<tier> put on it even when a newer set
// by time exists), then in the local store. The remote goes first, so a
// registry failure changes nothing here.
struct PromoteReport {
  std::string recipe;
  std::string tier;
  digest::Digest manifest;
  std::optional<digest::Digest> previous;  // the local current set before; none when it was this one or none
  bool previous_recorded = false;  // previous was recorded (else the newest verified set stood in)
  std::string remote;              // without credentials; empty when none is configured
  std::optional<PushedEntry> pushed;
  util::ExitCode exit_code = util::ExitCode::ok;
};
// Exit 0, 2 (no such set here, a set of another recipe x tier, not
// verified), 3 (the registry failed).
PromoteReport promote(const TransferRequest& request);
// Exit 0, 1 (digest, signature or archs refused), 2, 3.
PullReport pull(const TransferRequest& request);

}  // namespace orc::app
