#include "orchestrator/app/inspect/fetched_sets.hpp"

#include <algorithm>

#include "orchestrator/cache/set_record.hpp"
#include "orchestrator/site/arch_coverage.hpp"

namespace orc::app {

namespace fs = std::filesystem;

namespace {

std::optional<FetchedSet> read_set(const fs::path& dir, std::string name, const recipe::Config* config,
                                   const cache::TrustedKeys& trusted) {
  auto record = cache::read_set_record(dir, trusted);
  if (record && !*record) return std::nullopt;
  FetchedSet set{.dir = name, .prefix = name == "." ? "/" : "/" + name + "/"};
  if (!record) {
    set.why = "its record cannot be read: " + record.error().message;
    return set;
  }
  const cache::SetRecord& r = **record;
  set.recipe = r.manifest.recipe;
  set.tier = r.manifest.tier;
  set.manifest = r.digest;
  set.signature = r.signature;
  // An unverified record could name any tier: only a signed one chooses.
  if (r.signature.status != cache::VerifyStatus::verified) {
    set.why = "its manifest's signature does not verify here: " + r.signature.detail;
    return set;
  }
  if (const recipe::Tier* t = config ? config->find_tier(r.manifest.tier) : nullptr) {
    set.judged = *t;
    set.from = TierFrom::configuration;
    if (auto recorded = site::built_for_tier(r.manifest))
      for (const auto& g : t->gpus)
        if (!site::tier_has_cc(*recorded, g.cc.base())) set.added_since.push_back(g.label());
    return set;
  }
  std::string why;
  if (auto recorded = site::built_for_tier(r.manifest, &why)) {
    set.judged = std::move(*recorded);
    set.from = TierFrom::manifest;
    return set;
  }
  set.why = why + ", and " +
            (config ? "the configuration declares no tier '" + r.manifest.tier + "'"
                    : std::string("no configuration here declares its tier"));
  return set;
}

}  // namespace

bool holds_fetched_sets(const fs::path& dir) {
  std::error_code ec;
  const auto has = [&](const fs::path& d) { return fs::exists(fs::symlink_status(d / cache::k_set_record_dir, ec)); };
  if (has(dir)) return true;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (!entry.is_symlink(type_ec) && entry.is_directory(type_ec) && has(entry.path())) return true;
  }
  return false;
}

std::vector<FetchedSet> find_fetched_sets(const fs::path& dir, const recipe::Config* config,
                                          const cache::TrustedKeys& trusted) {
  std::vector<FetchedSet> out;
  if (auto self = read_set(dir, ".", config, trusted)) {
    out.push_back(std::move(*self));
    return out;
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (entry.is_symlink(type_ec) || !entry.is_directory(type_ec)) continue;
    if (auto set = read_set(entry.path(), entry.path().filename().string(), config, trusted))
      out.push_back(std::move(*set));
  }
  std::ranges::sort(out, {}, &FetchedSet::dir);
  return out;
}

}  // namespace orc::app
