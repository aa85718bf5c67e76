#pragma once
// Which store a use case opens. Every use case resolves it here, from what
// its request was given, so that a file kept beside the store (the watcher's
// probes, Slurm's work directories) lands beside the store the command used.
#include <filesystem>

namespace orc::site {

// `given` (--store, a request's store_root) when not empty; else
// cache::default_store_root(): $ORCHESTRATE_CACHE_DIR,
// $XDG_CACHE_HOME/orchestrate, ~/.cache/orchestrate.
std::filesystem::path store_root(const std::filesystem::path& given);

}  // namespace orc::site
