#include "orchestrator/app/smoke/smoke_attest.hpp"

#include <algorithm>
#include <ctime>

#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/smoke_run.hpp"
#include "orchestrator/site/arch_coverage.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

namespace {

using util::ExitCode;
using util::Failure;

Failure store_failure(const cache::Error& e) {
  const ExitCode code = e.kind == cache::ErrorKind::io        ? ExitCode::outside_failure
                        : e.kind == cache::ErrorKind::corrupt ? ExitCode::check_failed
                                                              : ExitCode::bad_input;
  return Failure(code, e.message);
}

}  // namespace

bool names_artifact_set(const std::string& argument) {
  if (!digest::DigestPrefix::parse(argument)) return false;
  // A bare hex word that is also a file in the current directory is the file.
  return argument.find(':') != std::string::npos || !std::filesystem::exists(argument);
}

AttestTarget resolve_artifact_set(const cache::Store& store, const std::string& prefix) {
  const auto parsed = digest::DigestPrefix::parse(prefix);
  if (!parsed) util::fail_input("--artifact: " + parsed.error());
  auto entry = store.index().resolve(*parsed);
  if (!entry) throw store_failure(entry.error());
  auto loaded = cache::load_artifact_set(store, *entry, cache::TrustedKeys{});
  if (!loaded) throw store_failure(loaded.error());
  AttestTarget target{.entry = *entry, .files = {}};
  for (const auto& f : loaded->manifest.files) target.files.push_back(store.blob_path(f.sha256));
  return target;
}

digest::Digest attest_artifact_set(cache::Store& store, const AttestTarget& target, const smoke::SmokeResult& result,
                                   const recipe::Tier& tier, const AttestingNode& node) {
  auto loaded = cache::load_artifact_set(store, target.entry, cache::TrustedKeys{});
  if (!loaded) throw store_failure(loaded.error());
  cache::NewArtifactSet set;
  set.manifest = loaded->manifest;
  set.manifest.created.clear();  // now
  const digest::Digest subject = cache::smoke_subject(set.manifest);
  const std::string when = cache::utc_rfc3339(static_cast<std::int64_t>(std::time(nullptr)));
  std::vector<cache::SmokeAttestation>& runs = set.manifest.smoke[tier.name];
  for (const auto& gpu : result.gpus) {
    cache::SmokeAttestation run{.gpu = gpu.name,
                                .cc = gpu.cc_known ? gpu.cc.dotted() : "unknown",
                                .driver = result.driver_version.empty() ? "unknown" : result.driver_version,
                                .outcome = gpu.passed() ? "pass" : "fail",
                                .time = when,
                                .node = node.host,
                                .ordinal = static_cast<std::uint32_t>(gpu.ordinal),
                                .member = gpu.cc_known && site::tier_has_cc(tier, gpu.cc.base())};
    cache::sign_smoke_run(run, node.key, tier.name, subject);
    cache::record_smoke_run(runs, std::move(run));
  }
  // The blobs, with the modes the index kept for them (a blob's own is not the file's).
  for (const auto& f : loaded->manifest.files) {
    set.sources.push_back(store.blob_path(f.sha256));
    const auto indexed = std::ranges::find(target.entry.files, f.path, &cache::IndexedFile::path);
    set.modes.push_back(indexed != target.entry.files.end() ? indexed->mode : 0644u);
  }
  // A set pulled from a registry has no build log here (the log stays where
  // it was built): the attested set then names none, and the set it attests
  // (its subject) keeps the log's digest.
  if (loaded->manifest.build_log && store.has_blob(*loaded->manifest.build_log))
    set.build_log = store.blob_path(*loaded->manifest.build_log);
  set.key = &node.key;
  set.verified = target.entry.verified;
  // The attested set takes the place of the one it attests: when that was
  // current, push and fetch --tier must now hand out the attested one.
  auto current = cache::read_current(store, target.entry.recipe, target.entry.tier);
  if (!current) throw store_failure(current.error());
  auto entry = cache::store_artifact_set(store, std::move(set));
  if (!entry) throw store_failure(entry.error());
  if (*current && **current == target.entry.manifest)
    if (auto written = cache::write_current(store, entry->recipe, entry->tier, entry->manifest); !written)
      throw store_failure(written.error());
  return entry->manifest;
}

}  // namespace orc::app
