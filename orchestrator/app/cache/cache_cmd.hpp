#pragma once
// `orchestrate cache ls | verify | gc` over the local store (cache::Store).
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/index.hpp"
#include "orchestrator/cache/maintenance.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

struct CacheRequest {
  std::filesystem::path store_root;  // empty: cache::default_store_root()
  bool json = false;
  std::string recipe;               // ls: only this recipe
  std::string tier;                 // ls: only this tier
  std::optional<std::size_t> keep;  // gc: newest sets kept per recipe x tier
  bool rebuild_index = false;       // verify: first make a new index from the manifests
  std::filesystem::path config;     // verify --rebuild-index: its trusted_keys, when it exists
};

struct CacheLsReport {
  std::filesystem::path store;
  std::vector<cache::IndexEntry> sets;  // newest first
};

struct CacheVerifyReport {
  std::filesystem::path store;
  std::optional<cache::RebuildReport> rebuilt;  // --rebuild-index
  cache::VerifyReport verified;
  std::string progress;  // waits for the store's lock, for stderr
  util::ExitCode exit_code = util::ExitCode::ok;
};

struct CacheGcReport {
  cache::GcReport collected;
  std::string progress;
  // outside_failure when --keep could not be applied: the file system was
  // still full after the removals (collected.index_untouched says why).
  util::ExitCode exit_code = util::ExitCode::ok;
};

// Throw util::Failure for a store that cannot be opened (exit 3 when the
// file system fails, 2 when its index is missing, damaged or of another
// version, saying how to rebuild it) or read. ls and verify read a store on
// a read-only or full file system read-only (verify then moves and drops
// nothing).
CacheLsReport cache_ls(const CacheRequest& request);
// Exit 1 when a blob was corrupt or missing (after quarantining it), or a
// manifest could not be indexed again for want of its files. With
// rebuild_index the index is made again first (cache::rebuild_index), the
// one it replaces kept in quarantine.v1/.
CacheVerifyReport cache_verify(const CacheRequest& request);
// Works on a full file system: tmp/'s leftovers go before the index is
// opened, unreferenced blobs before it is written (cache::sweep_tmp,
// cache::collect_garbage); a store that is full still after them is
// collected read-only, and --keep then fails with exit 3.
CacheGcReport cache_gc(const CacheRequest& request);

}  // namespace orc::app
