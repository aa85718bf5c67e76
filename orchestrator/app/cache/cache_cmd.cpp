#include "orchestrator/app/cache/cache_cmd.hpp"

#include <sstream>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/site/trust.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

namespace {

using util::ExitCode;

std::filesystem::path store_root(const CacheRequest& request) {
  return request.store_root.empty() ? cache::default_store_root() : request.store_root;
}

cache::Store open_store(const CacheRequest& request) {
  auto store = cache::Store::open(store_root(request));
  if (!store) site::fail_with(store.error());
  return std::move(*store);
}

}  // namespace

CacheLsReport cache_ls(const CacheRequest& request) {
  cache::Store store = open_store(request);
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
  cache::Store store = open_store(request);
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
  cache::Store store = open_store(request);
  std::ostringstream progress;
  auto collected = cache::collect_garbage(store, {.keep = request.keep}, progress);
  if (!collected) site::fail_with(collected.error());
  return {.collected = std::move(*collected), .progress = progress.str()};
}

}  // namespace orc::app
