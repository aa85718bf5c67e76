#pragma once
// `orchestrate watch` (issue 14): poll every feed of the configuration's
// `watch:`, and for each recipe x tier compare its newest verified artifact
// set with what the feeds offer under the recipe's policy. With --dry-run
// that is the report; otherwise each stale pair is rebuilt in the image the
// decision took (pulled through the engine), verified, stored with a
// manifest that says why (cache::RebuildTrigger), smoke-tested where a GPU
// of the tier is on this machine, and pushed where a remote is configured.
// A pair is rebuilt under a lock in the store, so two watchers never build
// the same pair; the second skips it and says who holds it.
#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/digest/digest.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/engine.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/watch/decide.hpp"

namespace orc::app {

struct WatchRequest {
  std::filesystem::path config;              // orchestrate.yaml
  std::filesystem::path store_root;          // empty: the default store
  bool dry_run = true;                       // report only
  std::optional<engine::EngineKind> engine;  // nullopt: discover (a rebuild needs a container engine)
  std::ostream* progress = nullptr;          // build logs and what the cycle does (stderr); null: none
  bool terminal = false;
  // Set by SIGINT/SIGTERM (the caller's handler): the build under way is
  // cancelled and nothing of it is stored; the pairs after it are left.
  engine::CancelFlag* cancel = nullptr;
  // With `keep:`, retention reaches the remote too (prune_remote): older
  // sets of each recipe x tier are deleted from the registry.
  bool prune_remote = false;
  // The most one cycle may take, feeds and rebuilds together. Past it the
  // request or build under way is stopped (nothing of it is stored) and the
  // cycle ends: a feed that trickles, or an index that links thousands of
  // manifests, cannot hold the watcher for days.
  std::chrono::seconds deadline{6 * 3600};
};

// Why a cycle ended before its end.
struct WatchStop {
  bool stopped = false;
  int signal = 0;         // SIGTERM, SIGINT; 0: the cancel flag was set by code
  bool deadline = false;  // the cycle's deadline passed
  std::chrono::seconds limit{0};
  // "stopped by SIGTERM", "the cycle's deadline of 6h passed".
  std::string text() const;
};

struct WatchFeedStatus {
  std::string name;
  bool ok = false;
  std::string error;       // when !ok
  std::size_t offers = 0;  // when ok
};

// What a cycle did about one stale pair.
enum class WatchAction {
  none,           // not stale (or not judged)
  would_rebuild,  // --dry-run
  rebuilt,        // built, verified and stored
  failed,         // pulling, building or verifying failed (see detail)
  locked,         // another watcher holds the pair's lock: skipped
  overtaken,      // stale when polled, up to date once the lock was held (another watcher rebuilt it)
  cancelled,      // SIGTERM/SIGINT: the build was stopped, nothing stored
};
std::string_view to_string(WatchAction action);

struct WatchOutcome {
  WatchAction action = WatchAction::none;
  std::string detail;                          // why it failed, who holds the lock, ...
  std::optional<digest::Digest> set;           // the new set (rebuilt)
  std::string image_digest;                    // what the engine pulled
  std::string image_made;                      // an offline image made again first: "REF (ID): name=version, ..."
  std::string probe;                           // what the image's nvcc said: "nvcc 13.0.88: sm_75 ... sm_121"
  std::vector<std::string> table_differences;  // where that differs from the tables' row
  std::string smoke;                           // "pass", "fail", or "not run: ..."
  std::string pushed;                          // the registry tag it was pushed as
  std::string push_error;                      // the push failed (the set is stored all the same)
  util::ExitCode exit_code = util::ExitCode::ok;
};

struct WatchPair {
  std::string recipe;
  std::string tier;
  std::string policy;
  bool built = false;   // a verified artifact set exists
  std::string problem;  // why the set could not be judged (its manifest names no toolkit), or empty
  std::string toolkit;  // what that set was built with: its image tag's release (13.0.1), else its manifest's
  std::string image;
  std::optional<digest::Digest> current_set;  // its manifest
  watch::Decision decision;
  WatchOutcome outcome;
};

// With no feed under `watch:`, what the cycle follows instead (issue 29).
struct WatchFollowed {
  std::string heading;             // "recipes/orchestrate.yaml: no 'watch:'; following what ... made from:"
  std::vector<std::string> about;  // per feed, what it follows and why
};

struct WatchReport {
  bool dry_run = true;
  std::optional<WatchFollowed> followed;  // the configuration names no feed
  std::vector<WatchFeedStatus> feeds;
  std::vector<WatchPair> pairs;
  std::size_t collected_sets = 0;  // removed by `keep:` after the rebuilds
  std::size_t pruned_remote = 0;   // removed from the remote by `keep:` with --remote
  std::string prune_error;         // the remote's retention failed (the cycle's exit code is 3)
  std::string notify_error;        // the notify POST failed (never fatal)
  bool notified = false;
  // A signal or the deadline ended the cycle early: the feeds not read and
  // the pairs not rebuilt say so; nothing after (retention, notify) ran.
  WatchStop stop;
  bool all_feeds_failed() const;
  // 128 + N when signal N stopped the cycle (the shell's convention: 143
  // for SIGTERM, 130 for SIGINT); 3 when every feed failed (nothing could
  // be judged) or the deadline passed; else the worst outcome of a rebuild
  // (1 a failed build or verification, 3 the engine or registry), else 0.
  util::ExitCode exit_code() const;
  // Pairs rebuilt or failed: what a notification is about.
  bool changed() const;
};

// One cycle. A configuration whose `watch:` names no feed (or that has no
// `watch:`) follows what this site's images are made from (watch/follow.hpp)
// and the report says so. Throws util::Failure: bad_input when nothing
// says that either (no image recorded, offline preference; the message
// says what to add), outside_failure when the store cannot be opened.
WatchReport watch_once(const WatchRequest& request);

// The report as JSON ({"dry_run", "feeds", "pairs", ...}): what --json
// prints and what the notify URL receives.
std::string watch_json(const WatchReport& report);

// The service: a cycle, a status line on `status`, then a wait of
// `interval` (shorter, 1 min doubling, while a feed fails), until the
// cancel flag is set; a cycle in flight stops with it. Returns 128 + N when
// signal N set it, else the exit code of the last cycle.
struct WatchServiceOptions {
  std::chrono::seconds interval{6 * 3600};
  std::size_t max_cycles = 0;  // 0: until stopped (tests stop after a few)
};
util::ExitCode watch_service(const WatchRequest& request, const WatchServiceOptions& options, std::ostream& status);

}  // namespace orc::app
