#pragma once
// A recipe's source on the host: its identity for the cache key (a git
// commit, or a hash of the tree) and a scratch copy to build in, so a build
// never writes into the user's checkout.
#include <expected>
#include <filesystem>
#include <string>

#include "orchestrator/engine/engine.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::app {

struct SourceState {
  std::string kind;               // "path" | "git"
  std::string revision;           // git commit, or "tree:<sha256>"
  std::filesystem::path dir;      // the tree to copy: the path itself, or the workspace checkout
};

// SHA-256 over the sorted relative paths of `dir` and, per entry, its kind
// and content (a file's bytes, a symlink's target), ignoring .git: what the
// build would see. "tree:<hex>".
std::expected<std::string, std::string> tree_hash(const std::filesystem::path& dir);

// A local path: its tree hash. A git URL + ref: fetched into
// `workspace`/checkout (git clone --no-checkout the first time, git fetch
// after, then git checkout --detach REF) through `runner`, which runs git as
// a local process; the checked-out commit is the revision. A ref that is a
// full commit already present is not fetched again.
std::expected<SourceState, std::string> prepare_source(const recipe::Source& source,
                                                       const std::filesystem::path& workspace,
                                                       engine::Engine& runner, engine::LogSink& log);

// Copies `from` to `to` (made fresh), symlinks as links, .git left out.
std::expected<void, std::string> copy_source_tree(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace orc::app
