#include "orchestrator/app/transfer/transfer_cmd.hpp"

#include <algorithm>
#include <cstdlib>

#include "orchestrator/app/transfer/transfer.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/site/trust.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using util::ExitCode;

cache::Store open_store(const TransferRequest& request) {
  auto store = cache::Store::open(request.store_root.empty() ? cache::default_store_root() : request.store_root);
  if (!store) site::fail_with(store.error());
  return std::move(*store);
}

[[noreturn]] void fail(const TransferError& error) { throw util::Failure(error.code, error.message); }

// The sets a push names: by digest, the newest verified of recipe x tier,
// the newest verified of each tier of a recipe, or every set (--all).
std::vector<cache::IndexEntry> sets_to_push(const cache::Store& store, const TransferRequest& request) {
  if (!request.digest.empty()) {
    auto entry = store.index().resolve(digest_argument(request.digest));
    if (!entry) site::fail_with(entry.error());
    return {std::move(*entry)};
  }
  if (request.all) {
    auto all = store.index().list();
    if (!all) site::fail_with(all.error());
    return std::move(*all);
  }
  if (request.recipe.empty()) util::fail_input("push needs a RECIPE (with --tier T), --digest D or --all");
  auto sets = store.index().list({.recipe = request.recipe, .tier = request.tier, .verified_only = true});
  if (!sets) site::fail_with(sets.error());
  std::vector<cache::IndexEntry> newest;  // list() is newest first: the first of each tier
  for (auto& e : *sets)
    if (std::ranges::none_of(newest, [&](const auto& n) { return n.tier == e.tier; })) newest.push_back(std::move(e));
  if (newest.empty())
    util::fail_input("no verified artifact set of " + request.recipe +
                     (request.tier.empty() ? "" : " for " + request.tier) + " in " + store.root().string() +
                     " (see 'orchestrate cache ls')");
  return newest;
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
  for (const auto& entry : sets) {
    auto pushed = push_set(store, *client, entry, progress);
    if (!pushed) {
      TransferError error = pushed.error();
      error.message = "pushing " + entry.recipe + " for " + entry.tier + " to " + report.remote + ": " + error.message;
      fail(error);
    }
    report.pushed.push_back({.recipe = entry.recipe,
                             .tier = entry.tier,
                             .manifest = entry.manifest.hex(),
                             .artifact = pushed->artifact_digest,
                             .tag = pushed->tag,
                             .uploaded = pushed->uploaded,
                             .skipped = pushed->skipped,
                             .moved_latest = pushed->moved_latest});
  }
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
      find_requested_set(*client, request, tier, trusted, cache::temp_name(store.tmp_dir(), "pull-smoke-manifest"));
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
                    .manifest = pulled->entry.manifest.hex(),
                    .downloaded = pulled->downloaded,
                    .verified = pulled->entry.verified};
  if (request.insecure) report.warnings.push_back(insecure_diagnostic(pulled->entry.manifest, pulled->signature));
  return report;
}

}  // namespace orc::app
