#pragma once
// The steps of a watch cycle (private to app/watch): the newest set of a
// pair and its judgement (watch.cpp), the rebuild of the stale pairs
// (watch_rebuild.cpp), the notification (watch_notify.cpp).
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/app/watch/watch.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/watch/probe.hpp"

namespace orc::app::detail {

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
// never thrown.
void notify(const std::string& url, WatchReport& report);

}  // namespace orc::app::detail
