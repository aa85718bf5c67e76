#include "orchestrator/app/cache/cache_cmd.hpp"

#include <sstream>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/site/store_root.hpp"
#include "orchestrator/site/trust.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

namespace {

using util::ExitCode;

std::filesystem::path store_root(const CacheRequest& request) { return site::store_root(request.store_root); }

cache::Store open_store(const CacheRequest& request, cache::StoreAccess access) {
  auto store = cache::Store::open(store_root(request), access);
  if (!store) site::fail_with(store.error());
  return std::move(*store);
}

// What gc freed before `error` stopped it, so the user knows it did something.
[[noreturn]] void fail_after(const cache::Store& store, const cache::Error& error, const cache::GcReport& done) {
  cache::Error worded = store.explain(error);
  if (done.removed_blobs + done.tmp.removed_temps + done.tmp.scratch.removed > 0)
    worded.message += " (gc had removed " + std::to_string(done.removed_blobs) + " blob(s), " +
                      std::to_string(done.tmp.removed_temps) + " temporary file(s) and " +
                      std::to_string(done.tmp.scratch.removed) + " build tree(s) before that)";
  site::fail_with(worded);
}

}  // namespace

CacheLsReport cache_ls(const CacheRequest& request) {
  cache::Store store = open_store(request, cache::StoreAccess::read);
  auto sets = store.index().list({.recipe = request.recipe, .tier = request.tier});
  if (!sets) site::fail_with(sets.error());
  return {.store = store.root(), .sets = std::move(*sets)};
}

CacheVerifyReport cache_verify(const CacheRequest& request) {
  std::ostringstream progress;
  CacheVerifyReport report;
  if (request.rebuild_index) {
    const auto config = site::load_config_file(request.config, false);
    auto made = cache::rebuild_index(store_root(request), site::trusted_keys(config ? &*config : nullptr), progress);
    if (!made) site::fail_with(made.error());
    report.rebuilt = std::move(*made);
  }
  cache::Store store = open_store(request, cache::StoreAccess::read);
  auto verified = cache::verify_store(store, progress);
  if (!verified) site::fail_with(verified.error());
  report.store = store.root();
  report.verified = std::move(*verified);
  report.progress = progress.str();
  const bool damaged = !report.verified.corrupt.empty() || !report.verified.missing.empty() ||
                       (report.rebuilt && !report.rebuilt->skipped.empty());
  report.exit_code = damaged ? ExitCode::check_failed : ExitCode::ok;
  return report;
}

CacheGcReport cache_gc(const CacheRequest& request) {
  const std::filesystem::path root = store_root(request);
  std::ostringstream progress;
  // On a full disk the index cannot be opened read-write until something is freed.
  auto swept = cache::sweep_tmp(root, progress);
  if (!swept) site::fail_with(cache::explain_store_error(root, swept.error()));
  CacheGcReport report;
  report.collected.tmp = std::move(*swept);
  {
    cache::Store store = open_store(request, cache::StoreAccess::read);
    auto collected = cache::collect_garbage(store, {.keep = request.keep}, progress);
    if (!collected) fail_after(store, collected.error(), report.collected);
    report.collected.add(*collected);
    if (!store.read_only()) {
      report.progress = progress.str();
      return report;
    }
  }
  // Opened read-only for want of space: the removals may have made room to
  // write the index (prune with --keep, drop packs).
  auto writable = cache::Store::open(root);
  if (writable) {
    auto more = cache::collect_garbage(*writable, {.keep = request.keep}, progress);
    if (!more) fail_after(*writable, more.error(), report.collected);
    report.collected.add(*more);
  } else if (!cache::is_full(writable.error())) {
    site::fail_with(writable.error());
  } else {
    report.collected.index_untouched = "the store's file system is still full after these removals (" +
                                       cache::free_space_of(root) +
                                       "): free space there, then run 'orchestrate cache gc' again";
    if (request.keep) report.exit_code = ExitCode::outside_failure;
  }
  report.progress = progress.str();
  return report;
}

}  // namespace orc::app
