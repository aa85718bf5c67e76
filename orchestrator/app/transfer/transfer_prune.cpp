// Retention in the remote (`cache gc --keep N --remote`, and the watcher's
// `keep:` with --remote): per recipe x tier of the configuration, the
// newest N artifact sets stay; each older one's artifact manifest is
// deleted by digest (its RECIPE--TIER--<hex> tag goes with it), then what
// refers to it (its signature) and the fallback referrers tag. Blobs are
// the registry's to collect (distribution's garbage-collect), as they may
// be shared with the sets kept.
#include <algorithm>

#include "orchestrator/app/transfer/transfer.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/registry/layout.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/remote.hpp"

namespace orc::app {

namespace {

using util::ExitCode;

// A registry that refuses deletes says 405 (distribution's UNSUPPORTED).
std::string delete_problem(const registry::Error& error) {
  if (error.status == 405)
    return error.message +
           " (the registry does not allow deletes: distribution needs storage.delete.enabled, "
           "REGISTRY_STORAGE_DELETE_ENABLED=true)";
  return error.message;
}

}  // namespace

PruneReport prune_remote(const std::filesystem::path& config_file, std::size_t keep) {
  if (keep == 0) util::fail_input("--remote needs --keep N (1 or more): how many sets of each recipe x tier stay");
  const auto config = site::load_config_file(config_file, true);
  const site::RemoteChoice remote = require_remote(&*config, "--remote prunes the remote");
  auto client = site::make_client(remote.url, registry::DeadlinePolicy{});
  PruneReport report{.remote = client->display_url()};
  auto tags = client->list_tags();
  if (!tags && tags.error().kind != registry::ErrorKind::not_found) {
    report.error = "listing the tags of " + report.remote + ": " + tags.error().message;
    report.exit_code = ExitCode::outside_failure;
    return report;
  }
  for (const auto& r : config->recipes)
    for (const auto& tier : r.tiers) {
      std::vector<std::pair<std::string, registry::FetchedManifest>> sets;  // created, manifest
      for (const auto& tag : tags ? *tags : std::vector<std::string>{}) {
        if (!site::is_set_tag_of(tag, r.name, tier)) continue;
        auto fetched = client->get_manifest(tag);
        if (!fetched) {
          report.error = "GET " + tag + ": " + fetched.error().message;
          report.exit_code = ExitCode::outside_failure;
          return report;
        }
        auto parsed = registry::parse_manifest(fetched->body);
        if (!parsed) continue;  // not one of ours: left alone
        auto info = registry::read_artifact(*parsed);
        if (!info) continue;
        sets.emplace_back(info->created, std::move(*fetched));
      }
      std::ranges::stable_sort(sets, std::greater{}, [](const auto& s) { return s.first; });
      report.kept += std::min(sets.size(), keep);
      for (std::size_t i = keep; i < sets.size(); ++i) {
        const digest::Digest& artifact = sets[i].second.digest;
        auto referrers = client->referrers(artifact);
        if (auto deleted = client->delete_manifest(artifact); !deleted) {
          report.error = "deleting " + r.name + " for " + tier + " (" + artifact.to_string() + ") from " +
                         report.remote + ": " + delete_problem(deleted.error());
          report.exit_code = ExitCode::outside_failure;
          return report;
        }
        // Its signature, and the tag that indexes it where the registry
        // has no referrers API; either may be gone already.
        for (const auto& d : referrers ? *referrers : std::vector<registry::Descriptor>{})
          (void)client->delete_manifest(d.digest);
        if (auto index = client->get_manifest(registry::referrers_tag(artifact)))
          (void)client->delete_manifest(index->digest);
        report.removed.push_back({.recipe = r.name, .tier = tier, .artifact = artifact, .created = sets[i].first});
      }
    }
  return report;
}

}  // namespace orc::app
