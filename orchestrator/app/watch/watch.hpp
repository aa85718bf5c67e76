#pragma once
// `orchestrate watch --once --dry-run` (issue 14, first step): poll every feed
// of the configuration's `watch:`, and for each recipe x tier compare its
// newest verified artifact set with what the feeds offer under the recipe's
// policy. Nothing is built yet: the report says which pairs are stale and
// why, and which newer offers were declined and why.
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/watch/decide.hpp"

namespace orc::app {

struct WatchRequest {
  std::filesystem::path config;      // orchestrate.yaml
  std::filesystem::path store_root;  // empty: the default store
};

struct WatchFeedStatus {
  std::string name;
  bool ok = false;
  std::string error;       // when !ok
  std::size_t offers = 0;  // when ok
};

struct WatchPair {
  std::string recipe;
  std::string tier;
  std::string policy;
  bool built = false;   // a verified artifact set exists
  std::string problem;  // why the set could not be judged (its manifest names no toolkit), or empty
  std::string toolkit;  // what that set was built with, as its manifest says
  std::string image;
  watch::Decision decision;
};

struct WatchReport {
  std::vector<WatchFeedStatus> feeds;
  std::vector<WatchPair> pairs;
  // 3 when every feed failed (nothing could be judged), else 0.
  util::ExitCode exit_code() const;
};

// Throws util::Failure: bad_input for a configuration without `watch:` (or
// with neither images nor redist), outside_failure when the store cannot be
// opened.
WatchReport watch_once(const WatchRequest& request);

}  // namespace orc::app
