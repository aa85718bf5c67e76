#pragma once
// The steps of a watch cycle (private to app/watch): the newest set of a
// pair and its judgement (watch.cpp), the rebuild of the stale pairs
// (watch_rebuild.cpp), the notification (watch_notify.cpp).
#include <atomic>
#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/app/watch/watch.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/watch/probe.hpp"

namespace orc::app::detail {

// A cycle's own stop flag: set when the caller's is (SIGTERM, SIGINT, its
// signal kept) or when the cycle's deadline passes. A thread looks every
// 50 ms, so whatever polls this flag (a transfer's progress callback, an
// engine waiting on a build) stops within a second of either.
class CycleStop {
 public:
  CycleStop(const engine::CancelFlag* outer, std::chrono::seconds deadline);
  CycleStop(const CycleStop&) = delete;
  CycleStop& operator=(const CycleStop&) = delete;
  engine::CancelFlag& flag() { return m_flag; }
  bool stopped() const { return m_flag.requested(); }
  WatchStop why() const;

 private:
  engine::CancelFlag m_flag;
  std::chrono::seconds m_deadline;
  std::atomic<bool> m_deadline_passed{false};
  std::jthread m_watch;  // last: it reads the members above
};

// "6h", "15m", "30s".
std::string duration_text(std::chrono::seconds s);

// The toolkit and image of a pair's newest verified set, from its manifest.
struct Built {
  util::Version toolkit;
  std::string toolkit_text;
  std::string image;
  std::string image_digest;
  digest::Digest manifest;
};
// nullopt when the pair has no verified set; throws util::Failure when the
// store cannot be read.
std::optional<Built> newest_set(cache::Store& store, const std::string& recipe, const std::string& tier);

// Fills pair's built fields and decision (or problem) against `offers`.
void judge(WatchPair& pair, const Built& built, const recipe::Config& config, const recipe::Recipe& r,
           const std::vector<watch::Offer>& offers, const std::vector<watch::Probe>& probes);

// With no feed in `settings`: adds the feeds of what this site's images are
// made from and says what they are; throws util::Failure bad_input, with
// what to add to `file`, when nothing is recorded to follow.
WatchFollowed follow_site(const std::filesystem::path& file, const recipe::Config& config,
                          recipe::WatchSettings& settings);

// Where the probes of toolkit images are kept: beside the image state file
// in the cache directory ($ORCHESTRATE_CACHE_DIR/toolkit-probes.v1.json).
std::filesystem::path probes_path();

// Rebuilds every stale pair of `report` that an image offer can serve,
// each under its lock, filling its outcome.
void rebuild_stale(const WatchRequest& request, const recipe::Config& config, cache::Store& store,
                   const std::vector<watch::Offer>& offers, std::vector<watch::Probe>& probes, WatchReport& report);

// The probe of `image` (registry digest `digest`): remembered in `probes`
// by digest, else run in a container through `engine` and recorded in
// probes_path(). An error says what failed.
std::expected<watch::Probe, std::string> probe_image(const WatchRequest& request, engine::DockerEngine& engine,
                                                     const std::string& image, const std::string& digest,
                                                     std::vector<watch::Probe>& probes);
// "nvcc 13.0.88: sm_75 sm_80 ...".
std::string describe(const watch::Probe& probe);

// POSTs watch_json(report) to `url`; a failure is recorded in the report,
// never thrown. `cancel` (the cycle's stop) ends the POST under way.
void notify(const std::string& url, WatchReport& report, const std::atomic<bool>* cancel);

}  // namespace orc::app::detail
