#include "orchestrator/app/watch/watch.hpp"

#include <algorithm>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/registry/client.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/watch/feeds.hpp"

namespace orc::app {

namespace {

using util::ExitCode;

// The feeds, and a failed status for each one that cannot even be made (a
// URL the registry client refuses): one bad entry never stops the others.
std::vector<std::unique_ptr<watch::Feed>> make_feeds(const recipe::WatchSettings& settings,
                                                     const std::shared_ptr<net::Transport>& transport,
                                                     std::vector<WatchFeedStatus>& failed) {
  std::vector<std::unique_ptr<watch::Feed>> feeds;
  for (const auto& image : settings.images) {
    try {
      feeds.push_back(watch::registry_feed(
          registry::ClientOptions{.url = image.url},
          watch::TagFilter{.flavour = image.flavour, .os = image.os, .cudnn = image.cudnn}, transport));
    } catch (const util::Failure& failure) {
      const std::string why = failure.diagnostics().empty() ? "refused" : failure.diagnostics().front().message;
      failed.push_back({.name = "registry (" + image.where.file + ":" + std::to_string(image.where.line) + ")",
                        .ok = false,
                        .error = why,
                        .offers = 0});
    }
  }
  for (const auto& url : settings.redist) feeds.push_back(watch::redist_feed(url, transport));
  return feeds;
}

// The set's toolkit and image, from its manifest in the store.
struct Built {
  util::Version toolkit;
  std::string toolkit_text;
  std::string image;
  std::string image_digest;
};

std::optional<Built> newest_set(cache::Store& store, const std::string& recipe, const std::string& tier) {
  auto entry = store.index().newest_verified(recipe, tier);
  if (!entry) site::fail_with(entry.error());
  if (!*entry) return std::nullopt;
  auto bytes = store.read_blob((*entry)->manifest);
  if (!bytes) site::fail_with(bytes.error());
  auto manifest = cache::parse_manifest(*bytes);
  if (!manifest)
    throw util::Failure(ExitCode::outside_failure, "the manifest of " + recipe + "/" + tier + " in " +
                                                       store.root().string() +
                                                       " does not parse: " + manifest.error().message);
  Built out{.toolkit = util::Version::parse(manifest->toolkit).value_or(util::Version{}),
            .toolkit_text = manifest->toolkit,
            .image = manifest->image,
            .image_digest = manifest->image_digest};
  out.toolkit = watch::built_release(out.toolkit, out.image);
  return out;
}

}  // namespace

ExitCode WatchReport::exit_code() const {
  const bool all_failed = !feeds.empty() && std::ranges::none_of(feeds, [](const WatchFeedStatus& f) { return f.ok; });
  return all_failed ? ExitCode::outside_failure : ExitCode::ok;
}

WatchReport watch_once(const WatchRequest& request) {
  const auto config = site::load_config_file(request.config, true);
  if (!config->watch || (config->watch->images.empty() && config->watch->redist.empty()))
    throw util::Failure(ExitCode::bad_input,
                        request.config.string() +
                            ": no 'watch:' with 'images' or 'redist': the watcher has nothing to read (see "
                            "recipes/schema.md, watch)");
  const recipe::WatchSettings& settings = *config->watch;

  WatchReport report;
  std::shared_ptr<net::Transport> transport = registry::make_curl_transport();
  std::vector<watch::Offer> offers;
  std::vector<WatchFeedStatus> unmade;
  for (const auto& feed : make_feeds(settings, transport, unmade)) {
    auto polled = feed->poll();
    WatchFeedStatus status{.name = feed->name(), .ok = polled.has_value()};
    if (polled) {
      status.offers = polled->size();
      offers.insert(offers.end(), polled->begin(), polled->end());
    } else {
      status.error = polled.error();
    }
    report.feeds.push_back(std::move(status));
  }
  report.feeds.insert(report.feeds.end(), unmade.begin(), unmade.end());
  if (report.exit_code() != ExitCode::ok) return report;  // nothing to judge against

  auto store = cache::Store::open(request.store_root.empty() ? cache::default_store_root() : request.store_root);
  if (!store) site::fail_with(store.error());
  for (const auto& r : config->recipes) {
    const std::string policy_name = r.watch.value_or(settings.policy);
    const watch::Policy policy = watch::parse_policy(policy_name).value_or(watch::Policy::patch);
    for (const auto& tier_name : r.tiers) {
      const recipe::Tier* tier = config->find_tier(tier_name);
      WatchPair pair{.recipe = r.name, .tier = tier_name, .policy = policy_name};
      const auto built = newest_set(*store, r.name, tier_name);
      if (built) {
        pair.built = true;
        pair.toolkit = built->toolkit_text;
        pair.image = built->image;
        if (built->toolkit.size() < 2) {
          pair.problem = "its manifest's toolkit '" + built->toolkit_text + "' is no version: not judged";
          report.pairs.push_back(std::move(pair));
          continue;
        }
        watch::Current current{.recipe = r.name,
                               .tier = tier_name,
                               .toolkit = built->toolkit,
                               .image = built->image,
                               .image_digest = built->image_digest,
                               .gpus = {},
                               .cuda = std::nullopt,
                               .allowed = config->toolkits,
                               .driver = tier ? tier->driver : std::nullopt};
        if (tier)
          for (const auto& g : tier->gpus) current.gpus.push_back(g.cc);
        if (r.requires_.cuda) current.cuda = r.requires_.cuda->range;
        pair.decision = watch::decide(current, offers, policy);
      }
      report.pairs.push_back(std::move(pair));
    }
  }
  return report;
}

}  // namespace orc::app
