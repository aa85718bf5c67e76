#pragma once
// `orchestrate cache ls | verify | gc` over the local store (cache::Store).
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "orchestrator/cache/error.hpp"

namespace orc::app {

struct CacheRequest {
  std::filesystem::path store_root;  // empty: cache::default_store_root()
  bool json = false;
  std::string recipe;               // ls: only this recipe
  std::string tier;                 // ls: only this tier
  std::optional<std::size_t> keep;  // gc: newest sets kept per recipe x tier
};

// What a command prints and how it exits.
struct CacheOutput {
  std::string out;
  std::string err;
  int exit_code = 0;
};

// Throw util::Failure for a store that cannot be opened (exit 3) or read.
CacheOutput cache_ls(const CacheRequest& request);
// Exit 1 when a blob was corrupt or missing (after quarantining it).
CacheOutput cache_verify(const CacheRequest& request);
CacheOutput cache_gc(const CacheRequest& request);

// Throws util::Failure for a cache error: io -> 3, corrupt -> 1, the rest -> 2.
[[noreturn]] void fail_with(const cache::Error& error);

}  // namespace orc::app
