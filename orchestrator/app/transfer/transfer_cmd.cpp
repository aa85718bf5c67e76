#include "orchestrator/app/transfer/transfer_cmd.hpp"

#include <algorithm>
#include <cstdlib>

#include "orchestrator/app/transfer/transfer.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/site/store_root.hpp"
#include "orchestrator/site/trust.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using util::ExitCode;

cache::Store open_store(const TransferRequest& request) {
  auto store = cache::Store::open(site::store_root(request.store_root));
  if (!store) site::fail_with(store.error());
  return std::move(*store);
}

[[noreturn]] void fail(const TransferError& error) { throw util::Failure(error.code, error.message); }

// One set a push sends, and whether it is the current set of its recipe x
// tier (cache/current.hpp), which the moving tag is then put on.
struct ToPush {
  cache::IndexEntry entry;
  bool current = false;
  std::optional<digest::Digest> newer;  // a verified set newer by time than the current one
};

cache::CurrentSet current_of(const cache::Store& store, const std::string& recipe, const std::string& tier) {
  auto current = cache::current_set(store, recipe, tier);
  if (!current) site::fail_with(current.error());
  return std::move(*current);
}

ToPush to_push(const cache::Store& store, cache::IndexEntry entry) {
  const cache::CurrentSet current = current_of(store, entry.recipe, entry.tier);
  const bool is_current = current.entry && current.entry->manifest == entry.manifest;
  std::optional<digest::Digest> newer;
  if (is_current && current.newer) newer = current.newer->manifest;
  return {.entry = std::move(entry), .current = is_current, .newer = newer};
}

// The sets a push names: by digest, the current set of recipe x tier, the
// current set of each tier of a recipe, or every set (--all).
std::vector<ToPush> sets_to_push(const cache::Store& store, const TransferRequest& request) {
  if (!request.digest.empty()) {
    auto entry = store.index().resolve(digest_argument(request.digest));
    if (!entry) site::fail_with(entry.error());
    return {to_push(store, std::move(*entry))};
  }
  if (request.all) {
    auto all = store.index().list();
    if (!all) site::fail_with(all.error());
    std::vector<ToPush> out;
    for (auto& e : *all) out.push_back(to_push(store, std::move(e)));
    return out;
  }
  if (request.recipe.empty()) util::fail_input("push needs a RECIPE (with --tier T), --digest D or --all");
  auto sets = store.index().list({.recipe = request.recipe, .tier = request.tier, .verified_only = true});
  if (!sets) site::fail_with(sets.error());
  std::vector<std::string> tiers;  // list() is newest first
  for (const auto& e : *sets)
    if (std::ranges::find(tiers, e.tier) == tiers.end()) tiers.push_back(e.tier);
  if (tiers.empty())
    util::fail_input("no verified artifact set of " + request.recipe +
                     (request.tier.empty() ? "" : " for " + request.tier) + " in " + store.root().string() +
                     " (see 'orchestrate cache ls')");
  std::vector<ToPush> out;
  for (const auto& tier : tiers) {
    const cache::CurrentSet current = current_of(store, request.recipe, tier);
    out.push_back({.entry = *current.entry,
                   .current = true,
                   .newer = current.newer ? std::optional(current.newer->manifest) : std::nullopt});
  }
  return out;
}

PushedEntry pushed_entry(const cache::IndexEntry& entry, const PushedSet& pushed, bool current,
                         std::optional<digest::Digest> newer) {
  return {.recipe = entry.recipe,
          .tier = entry.tier,
          .manifest = entry.manifest,
          .artifact = pushed.artifact_digest,
          .tag = pushed.tag,
          .uploaded = pushed.uploaded,
          .skipped = pushed.skipped,
          .moved_latest = pushed.moved_latest,
          .current = current,
          .newer = newer,
          .previous = pushed.previous_latest};
}

}  // namespace

util::Diagnostic insecure_diagnostic(const digest::Digest& manifest, const cache::Verification& signature) {
  const bool verified = signature.status == cache::VerifyStatus::verified;
  return {.severity = util::Severity::warning,
          .message = "--insecure: the signature check is off for " + manifest.short_string(site::k_tag_digest_chars) +
                     " (" + (verified ? "it verifies anyway: " : "it does not verify: ") + signature.detail + ")"};
}

std::string insecure_warning(const digest::Digest& manifest, const cache::Verification& signature) {
  return insecure_diagnostic(manifest, signature).render();
}

const recipe::Tier& find_tier(const recipe::Config& config, const std::string& name) {
  if (const recipe::Tier* tier = config.find_tier(name)) return *tier;
  std::vector<std::string> names;
  for (const auto& t : config.tiers) names.push_back(t.name);
  throw util::Failure(ExitCode::bad_input,
                      {util::Diagnostic{.message = "no tier '" + name + "' in " + config.file.string(),
                                        .suggestion = util::did_you_mean(name, names)}});
}

site::RemoteChoice require_remote(const recipe::Config* config, std::string_view why) {
  auto remote = site::choose_remote(util::env_value("ORCHESTRATE_REMOTE").c_str(), config);
  if (!remote)
    util::fail_input(std::string(why) + ", and no remote is configured: set ORCHESTRATE_REMOTE or 'remote:' in " +
                     (config ? config->file.string() : std::string("orchestrate.yaml")));
  return std::move(*remote);
}

PushReport push(const TransferRequest& request) {
  const auto config = site::load_config_file(request.config, false);
  cache::Store store = open_store(request);
  const auto sets = sets_to_push(store, request);
  const site::RemoteChoice remote = require_remote(config ? &*config : nullptr, "push needs a remote");
  auto client = site::make_client(remote.url, request.deadlines);
  const TransferProgress progress(request.progress, request.terminal);
  PushReport report{.remote = client->display_url()};
  for (const auto& [entry, current, newer] : sets) {
    auto pushed = push_set(store, *client, entry, progress, current);
    if (!pushed) {
      TransferError error = pushed.error();
      error.message = "pushing " + entry.recipe + " for " + entry.tier + " to " + report.remote + ": " + error.message;
      fail(error);
    }
    report.pushed.push_back(pushed_entry(entry, *pushed, current, newer));
  }
  return report;
}

PromoteReport promote(const TransferRequest& request) {
  if (request.recipe.empty() || request.tier.empty() || request.digest.empty())
    util::fail_input("promote needs RECIPE, --tier T and --digest D (see 'orchestrate cache ls' for the sets here)");
  const auto config = site::load_config_file(request.config, false);
  cache::Store store = open_store(request);
  auto entry = store.index().resolve(digest_argument(request.digest));
  if (!entry)
    site::fail_with(cache::Error{entry.error().kind, entry.error().message + " ('orchestrate pull " + request.recipe +
                                                         " --tier " + request.tier + " --digest " + request.digest +
                                                         "' brings a set of the remote here)"});
  if (entry->recipe != request.recipe || entry->tier != request.tier)
    util::fail_input(entry->manifest.to_string() + " is a set of " + entry->recipe + " for " + entry->tier +
                     ", not of " + request.recipe + " for " + request.tier);
  if (!entry->verified)
    util::fail_input(entry->manifest.to_string() +
                     " is not a verified set (its archs or signature did not check): only a verified set can be "
                     "current");
  const cache::CurrentSet before = current_of(store, request.recipe, request.tier);
  PromoteReport report{.recipe = request.recipe, .tier = request.tier, .manifest = entry->manifest};
  if (before.entry && before.entry->manifest != entry->manifest) {
    report.previous = before.entry->manifest;
    report.previous_recorded = before.recorded;
  }
  if (auto remote = site::choose_remote(util::env_value("ORCHESTRATE_REMOTE").c_str(), config ? &*config : nullptr)) {
    auto client = site::make_client(remote->url, request.deadlines);
    report.remote = client->display_url();
    const TransferProgress progress(request.progress, request.terminal);
    auto pushed = push_set(store, *client, *entry, progress, true);
    if (!pushed) {
      TransferError error = pushed.error();
      error.message = "promoting " + entry->manifest.short_string(site::k_tag_digest_chars) + " on " + report.remote +
                      ": " + error.message + " (nothing changed here; the remote's tag may still name the set before)";
      fail(error);
    }
    report.pushed = PushedEntry{.recipe = entry->recipe,
                                .tier = entry->tier,
                                .manifest = entry->manifest,
                                .artifact = pushed->artifact_digest,
                                .tag = pushed->tag,
                                .uploaded = pushed->uploaded,
                                .skipped = pushed->skipped,
                                .moved_latest = pushed->moved_latest,
                                .current = true,
                                .previous = pushed->previous_latest};
  }
  if (auto written = cache::write_current(store, entry->recipe, entry->tier, entry->manifest); !written)
    site::fail_with(written.error());
  return report;
}

PullReport pull(const TransferRequest& request) {
  if (request.recipe.empty() || request.tier.empty()) util::fail_input("pull needs RECIPE and --tier T");
  const auto config = site::load_config_file(request.config, true);
  const recipe::Tier& tier = find_tier(*config, request.tier);
  const cache::TrustedKeys trusted = site::trusted_keys(&*config);
  cache::Store store = open_store(request);
  const site::RemoteChoice remote = require_remote(&*config, "pull needs a remote");
  auto client = site::make_client(remote.url, request.deadlines);
  const TransferProgress progress(request.progress, request.terminal);
  auto set =
      find_requested_set(*client, request, &tier, trusted, cache::temp_name(store.tmp_dir(), "pull-smoke-manifest"));
  if (!set) fail(set.error());
  const PullOptions options{.trusted = &trusted,
                            .tier = &tier,
                            .insecure = request.insecure,
                            .require_smoke = request.require_smoke,
                            .key = request.key};
  auto pulled = pull_set(store, *client, *set, options, progress);
  if (!pulled) fail(pulled.error());
  PullReport report{.recipe = request.recipe,
                    .tier = request.tier,
                    .manifest = pulled->entry.manifest,
                    .downloaded = pulled->downloaded,
                    .verified = pulled->entry.verified};
  if (request.insecure) report.warnings.push_back(insecure_diagnostic(pulled->entry.manifest, pulled->signature));
  return report;
}

}  // namespace orc::app
