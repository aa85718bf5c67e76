// Finding a set in the remote: the newest of recipe x tier, the one a
// digest (prefix) names, or the newest that attests a passing smoke run.
#include <algorithm>
#include <functional>

#include "orchestrator/app/transfer/transfer.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/digest/digest.hpp"
#include "orchestrator/registry/protocol.hpp"
#include "orchestrator/site/arch_coverage.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using util::ExitCode;

namespace {

// The set an artifact manifest describes, or why it is not one of ours for
// recipe x tier.
std::expected<RemoteSet, std::string> to_remote_set(const registry::FetchedManifest& fetched, const std::string& recipe,
                                                    const std::string& tier) {
  auto manifest = registry::parse_manifest(fetched.body);
  if (!manifest) return std::unexpected(manifest.error().message);
  auto info = registry::read_artifact(*manifest);
  if (!info) return std::unexpected(info.error().message);
  if (info->recipe != recipe || info->tier != tier)
    return std::unexpected("it holds " + info->recipe + " for " + info->tier + ", not " + recipe + " for " + tier);
  if (manifest->layers.size() != 1 || manifest->layers[0].media_type != registry::k_layer_tar_zstd)
    return std::unexpected("it does not have exactly one tar+zstd layer");
  const digest::Digest set_digest = manifest->config.digest;
  return RemoteSet{.artifact_digest = fetched.digest,
                   .manifest = std::move(*manifest),
                   .info = std::move(*info),
                   .set_digest = set_digest};
}

}  // namespace

digest::DigestPrefix digest_argument(const std::string& text) {
  auto prefix = digest::DigestPrefix::parse(text);
  if (!prefix) util::fail_input("--digest: " + prefix.error());
  return *prefix;
}

std::expected<RemoteSet, TransferError> find_remote_set(registry::Client& client, const std::string& recipe,
                                                        const std::string& tier, const std::string& digest) {
  const std::string where = recipe + " for " + tier + " in " + client.display_url();
  if (digest.empty()) {
    auto fetched = client.get_manifest(site::latest_tag(recipe, tier));
    if (!fetched && fetched.error().kind == registry::ErrorKind::not_found)
      return transfer_failed(ExitCode::bad_input, "no artifact set of " + where);
    if (!fetched) return std::unexpected(from_registry(fetched.error()));
    auto set = to_remote_set(*fetched, recipe, tier);
    if (!set)
      return transfer_failed(ExitCode::check_failed, "tag " + site::latest_tag(recipe, tier) + ": " + set.error());
    return std::move(*set);
  }
  const digest::DigestPrefix requested = digest_argument(digest);
  const std::string& prefix = requested.hex();
  auto tags = client.list_tags();
  if (!tags && tags.error().kind == registry::ErrorKind::not_found)
    return transfer_failed(ExitCode::bad_input, "no artifact set " + requested.to_string() + " of " + where);
  if (!tags) return std::unexpected(from_registry(tags.error()));
  const std::string short_prefix = prefix.substr(0, std::min(prefix.size(), site::k_tag_digest_chars));
  std::vector<RemoteSet> found;
  for (const auto& tag : *tags) {
    if (!site::is_set_tag_of(tag, recipe, tier) ||
        !tag.substr(tag.size() - site::k_tag_digest_chars).starts_with(short_prefix))
      continue;
    auto fetched = client.get_manifest(tag);
    if (!fetched) return std::unexpected(from_registry(fetched.error()));
    auto set = to_remote_set(*fetched, recipe, tier);
    if (set && requested.matches(set->set_digest)) found.push_back(std::move(*set));
  }
  if (found.empty())
    return transfer_failed(ExitCode::bad_input, "no artifact set " + requested.to_string() + " of " + where);
  if (found.size() > 1) {
    std::vector<std::string> names;
    for (const auto& s : found) names.push_back(s.set_digest.to_string());
    return transfer_failed(ExitCode::bad_input, "--digest " + digest + " names " + std::to_string(found.size()) +
                                                    " artifact sets of " + where + ": " + util::join(names, ", "));
  }
  return std::move(found.front());
}

std::expected<RemoteSet, TransferError> find_smoked_remote_set(registry::Client& client, const std::string& recipe,
                                                               const std::string& tier_name, const recipe::Tier* tier,
                                                               const cache::TrustedKeys& trusted,
                                                               const fs::path& temp) {
  auto tags = client.list_tags();
  if (!tags && tags.error().kind != registry::ErrorKind::not_found) return std::unexpected(from_registry(tags.error()));
  std::vector<RemoteSet> sets;
  for (const auto& tag : tags ? *tags : std::vector<std::string>{}) {
    if (!site::is_set_tag_of(tag, recipe, tier_name)) continue;
    auto fetched = client.get_manifest(tag);
    if (!fetched) return std::unexpected(from_registry(fetched.error()));
    if (auto set = to_remote_set(*fetched, recipe, tier_name)) sets.push_back(std::move(*set));
  }
  const std::string where = recipe + " for " + tier_name + " in " + client.display_url();
  if (sets.empty()) return transfer_failed(ExitCode::bad_input, "no artifact set of " + where);
  std::ranges::stable_sort(sets, std::greater{}, [](const RemoteSet& s) { return s.info.created; });
  TempPaths temps{{temp}};
  std::string newest_problem;
  for (auto& set : sets) {
    if (set.manifest.config.size > cache::k_max_manifest_bytes) continue;
    if (auto got = client.fetch_blob(set.manifest.config.digest, set.manifest.config.size, temp); !got)
      return std::unexpected(from_registry(got.error()));
    auto bytes = cache::read_file(temp);
    if (!bytes) return std::unexpected(from_cache(bytes.error()));
    auto manifest = cache::parse_manifest(*bytes);
    if (!manifest) continue;
    std::string why;
    const std::optional<recipe::Tier> recorded = tier ? std::nullopt : site::built_for_tier(*manifest, &why);
    if (!tier && !recorded) {
      if (newest_problem.empty()) newest_problem = set.set_digest.to_string() + ": " + why;
      continue;
    }
    auto problem = site::smoke_problem(*manifest, set.set_digest, tier ? *tier : *recorded, trusted);
    if (!problem) return std::move(set);
    if (newest_problem.empty()) newest_problem = std::move(*problem);
  }
  return transfer_failed(ExitCode::check_failed, "no artifact set of " + where +
                                                     " passes --require-smoke; the newest: " +
                                                     (newest_problem.empty() ? "unreadable" : newest_problem));
}

std::expected<RemoteSet, TransferError> find_requested_set(registry::Client& client, const TransferRequest& request,
                                                           const recipe::Tier* tier, const cache::TrustedKeys& trusted,
                                                           const fs::path& temp) {
  if (request.require_smoke && request.digest.empty())
    return find_smoked_remote_set(client, request.recipe, request.tier, tier, trusted, temp);
  return find_remote_set(client, request.recipe, request.tier, request.digest);
}

}  // namespace orc::app
