#include "orchestrator/app/watch/watch.hpp"

#include <algorithm>
#include <ostream>
#include <thread>

#include "orchestrator/app/cache/cache_cmd.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/app/watch/watch_detail.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/imaging/rootfs.hpp"
#include "orchestrator/registry/client.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/site/store_root.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/watch/debian.hpp"
#include "orchestrator/watch/feeds.hpp"
#include "orchestrator/watch/follow.hpp"

namespace orc::app {

namespace {

using util::ExitCode;

// The offline images the Debian feed watches: those 'debian: images' names
// (an unknown name is bad input, with its line), else every one `images
// build` recorded here. An error when there are none.
std::expected<std::vector<watch::WatchedImage>, std::string> debian_images(const recipe::WatchDebian& settings) {
  std::vector<const compat::OfflineImage*> chosen;
  for (const auto& n : settings.images) {
    const compat::OfflineImage* image = compat::find_offline_image(n.name);
    if (!image) {
      const auto names = compat::offline_image_names();
      throw util::Failure(ExitCode::bad_input,
                          {util::Diagnostic{.where = n.where,
                                            .message = "unknown offline image '" + n.name +
                                                       "' in 'debian: images' (known: " + util::join(names, ", ") + ")",
                                            .suggestion = util::did_you_mean(n.name, names)}});
    }
    chosen.push_back(image);
  }
  if (settings.images.empty())
    for (const auto& record : site::read_image_state(site::image_state_path()))
      if (const compat::OfflineImage* image = compat::find_offline_image(record.reference)) chosen.push_back(image);
  if (chosen.empty())
    return std::unexpected(
        "no offline image is recorded here (`orchestrate images build NAME` makes one) and "
        "'debian: images' names none: nothing to compare with the archive");
  std::vector<watch::WatchedImage> out;
  for (const compat::OfflineImage* image : chosen)
    if (std::ranges::none_of(out, [&](const auto& w) { return w.name == image->name; }))
      out.push_back(watch::watched_image(*image));
  return out;
}

// The feeds, and a failed status for each one that cannot even be made (a
// URL the registry client refuses): one bad entry never stops the others.
// Every request goes through `transport` (the cycle's stop flag on each);
// a registry's waits between retries end when that flag is set.
std::vector<std::unique_ptr<watch::Feed>> make_feeds(const recipe::WatchSettings& settings,
                                                     const std::shared_ptr<net::Transport>& transport,
                                                     const engine::CancelFlag& stop,
                                                     std::vector<WatchFeedStatus>& failed) {
  const auto wait = [&stop](std::chrono::milliseconds span) {
    const auto until = std::chrono::steady_clock::now() + span;
    while (!stop.requested() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(
          std::min<std::chrono::nanoseconds>(std::chrono::milliseconds(20), until - std::chrono::steady_clock::now()));
  };
  std::vector<std::unique_ptr<watch::Feed>> feeds;
  for (const auto& image : settings.images) {
    try {
      feeds.push_back(watch::registry_feed(
          registry::ClientOptions{.url = image.url, .sleep = wait},
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
  if (settings.debian) {
    auto images = debian_images(*settings.debian);
    const std::optional<std::string> mirror =
        settings.debian->mirror.empty() ? imaging::debian_mirror() : settings.debian->mirror;
    if (!images)
      failed.push_back({.name = "debian", .ok = false, .error = images.error(), .offers = 0});
    else if (!mirror)
      failed.push_back({.name = "debian",
                        .ok = false,
                        .error = "no Debian mirror: set 'debian: mirror' or ORCHESTRATE_DEBIAN_MIRROR (the host's apt "
                                 "sources name none)",
                        .offers = 0});
    else
      feeds.push_back(watch::debian_feed(*mirror, std::move(*images), transport));
  }
  return feeds;
}

}  // namespace

namespace detail {

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
            .image_digest = manifest->image_digest,
            .manifest = (*entry)->manifest};
  out.toolkit = watch::built_release(out.toolkit, out.image);
  return out;
}

std::filesystem::path probes_path() { return cache::default_store_root() / "toolkit-probes.v1.json"; }

void judge(WatchPair& pair, const Built& built, const recipe::Config& config, const recipe::Recipe& r,
           const std::vector<watch::Offer>& offers, const std::vector<watch::Probe>& probes) {
  pair.built = true;
  // The release as precisely as known (13.0.1 from its image's tag), else
  // what the manifest says.
  pair.toolkit = built.toolkit.size() >= 2 ? built.toolkit.str() : built.toolkit_text;
  pair.image = built.image;
  pair.current_set = built.manifest;
  pair.decision = {};
  if (built.toolkit.size() < 2) {
    pair.problem = "its manifest's toolkit '" + built.toolkit_text + "' is no version: not judged";
    return;
  }
  const recipe::Tier* tier = config.find_tier(pair.tier);
  watch::Current current{.recipe = r.name,
                         .tier = pair.tier,
                         .toolkit = built.toolkit,
                         .image = built.image,
                         .image_digest = built.image_digest,
                         .gpus = {},
                         .cuda = std::nullopt,
                         .allowed = config.toolkits,
                         .driver = tier ? tier->driver : std::nullopt};
  if (tier)
    for (const auto& g : tier->gpus) current.gpus.push_back(g.cc);
  if (r.requires_.cuda) current.cuda = r.requires_.cuda->range;
  if (compat::find_offline_image(built.image))
    if (const auto record = site::find_built_image(built.image))
      current.image_record = watch::Current::ImageRecord{.id = record->id, .packages = record->packages};
  const std::string policy_name = r.watch.value_or(config.watch ? config.watch->policy : "patch");
  pair.decision =
      watch::decide(current, offers, watch::parse_policy(policy_name).value_or(watch::Policy::patch), probes);
}

}  // namespace detail

namespace {

// keep: N after a cycle that stored sets: the older sets of every recipe x
// tier and the blobs no kept set names.
std::size_t apply_retention(const WatchRequest& request, std::size_t keep) {
  const CacheGcReport gc = cache_gc(CacheRequest{.store_root = request.store_root, .keep = keep});
  if (request.progress && !gc.progress.empty()) *request.progress << gc.progress;
  return gc.collected.removed_sets.size();
}

}  // namespace

bool WatchReport::all_feeds_failed() const {
  return !feeds.empty() && std::ranges::none_of(feeds, [](const WatchFeedStatus& f) { return f.ok; });
}

ExitCode WatchReport::exit_code() const {
  // 128 + N is no ExitCode of the enum's, but the status a shell, systemd
  // and docker read as "stopped by signal N".
  if (stop.stopped && stop.signal != 0) return static_cast<ExitCode>(128 + stop.signal);
  if (all_feeds_failed() || stop.deadline) return ExitCode::outside_failure;
  ExitCode code = prune_error.empty() ? ExitCode::ok : ExitCode::outside_failure;
  for (const auto& p : pairs) code = std::max(code, p.outcome.exit_code);
  return code;
}

bool WatchReport::changed() const {
  return std::ranges::any_of(pairs, [](const WatchPair& p) {
    return p.outcome.action == WatchAction::rebuilt || p.outcome.action == WatchAction::failed;
  });
}

std::string_view to_string(WatchAction action) {
  switch (action) {
    case WatchAction::none:
      return "none";
    case WatchAction::would_rebuild:
      return "would-rebuild";
    case WatchAction::rebuilt:
      return "rebuilt";
    case WatchAction::failed:
      return "failed";
    case WatchAction::locked:
      return "locked";
    case WatchAction::overtaken:
      return "overtaken";
    case WatchAction::cancelled:
      return "cancelled";
  }
  return "?";
}

WatchReport watch_once(const WatchRequest& request) {
  const auto config = site::load_config_file(request.config, true);
  recipe::WatchSettings settings = config->watch.value_or(recipe::WatchSettings{});
  WatchReport report;
  report.dry_run = request.dry_run;
  if (settings.images.empty() && settings.redist.empty() && !settings.debian)
    report.followed = detail::follow_site(request.config, *config, settings);

  detail::CycleStop stop(request.cancel, request.deadline);
  const std::shared_ptr<net::Transport> transport =
      net::cancellable(registry::make_curl_transport(), stop.flag().get());
  std::vector<watch::Offer> offers;
  std::vector<WatchFeedStatus> unmade;
  for (const auto& feed : make_feeds(settings, transport, stop.flag(), unmade)) {
    // A feed cut short by the stop, or never started, says why instead of
    // the "cancelled" its transfer saw.
    std::expected<std::vector<watch::Offer>, std::string> polled = std::unexpected(std::string());
    if (!stop.stopped()) polled = feed->poll();
    WatchFeedStatus status{.name = feed->name(), .ok = polled.has_value() && !stop.stopped()};
    if (status.ok) {
      status.offers = polled->size();
      offers.insert(offers.end(), polled->begin(), polled->end());
    } else {
      status.error = stop.stopped() ? feed->name() + ": not read: " + stop.why().text() : polled.error();
    }
    report.feeds.push_back(std::move(status));
  }
  report.feeds.insert(report.feeds.end(), unmade.begin(), unmade.end());
  report.stop = stop.why();
  if (report.stop.stopped || report.all_feeds_failed()) return report;  // nothing to judge against

  const std::filesystem::path store_root = site::store_root(request.store_root);
  auto store = cache::Store::open(store_root);
  if (!store) site::fail_with(store.error());
  std::vector<watch::Probe> probes = watch::read_probes(detail::probes_path());
  for (const auto& r : config->recipes) {
    for (const auto& tier_name : r.tiers) {
      WatchPair pair{.recipe = r.name, .tier = tier_name, .policy = r.watch.value_or(settings.policy)};
      if (const auto built = detail::newest_set(*store, r.name, tier_name))
        detail::judge(pair, *built, *config, r, offers, probes);
      if (pair.decision.stale) pair.outcome.action = WatchAction::would_rebuild;
      report.pairs.push_back(std::move(pair));
    }
  }
  if (request.dry_run) return report;

  // The rebuilds stop with the cycle: at its deadline as at a signal.
  WatchRequest bounded = request;
  bounded.cancel = &stop.flag();
  detail::rebuild_stale(bounded, *config, *store, offers, probes, report);
  report.stop = stop.why();
  if (report.stop.stopped) {
    for (auto& p : report.pairs)
      if (p.outcome.action == WatchAction::cancelled) p.outcome.detail = report.stop.text() + ": " + p.outcome.detail;
    return report;
  }
  const bool stored = std::ranges::any_of(report.pairs, [](const WatchPair& p) { return p.outcome.set.has_value(); });
  if (stored && settings.keep > 0) report.collected_sets = apply_retention(request, settings.keep);
  if (stored && settings.keep > 0 && request.prune_remote) {
    const PruneReport pruned = prune_remote(request.config, settings.keep);
    report.pruned_remote = pruned.removed.size();
    report.prune_error = pruned.error;
  }
  if (!settings.notify.empty() && report.changed()) detail::notify(settings.notify, report, stop.flag().get());
  return report;
}

}  // namespace orc::app
