#pragma once
// Path globs: the one syntax every pattern of the schema uses (`artifacts:`,
// `include:`; recipes/schema.md is the users' description). A glob is matched
// one '/'-separated component at a time:
//   *  any run of characters      ?  one character      \c  c itself
//   [abc] [a-z] one of a set; [!a-z] or [^a-z] one character not in it
//   ** (a whole component) zero or more directories: **/x, a/**/x, a/**
// A name starting with '.' is matched only by a component written with a
// leading '.', and ** does not enter such directories; so `*` never picks up
// .git, as in the shell.
#include <cstddef>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orc::util {

// Whether one file name matches one component of a glob (no '/' in either).
// Linear in practice and never exponential, however many stars.
bool glob_match(std::string_view pattern, std::string_view name);

// Whether a component needs a directory listing to expand; one without is a
// plain name, looked up directly.
bool glob_has_wildcard(std::string_view component);

struct GlobLimits {
  // The walk stops once it has found one more than this, so a caller that
  // caps matches can say "more than N" without reading a whole disk.
  std::size_t max_matches = std::numeric_limits<std::size_t>::max();
};

// The regular files under `root` that `glob` names (a symlink counts when it
// leads to a regular file), relative to root, sorted. Directories are walked
// only as far as the glob reaches. A symlinked directory is entered only when
// it resolves inside root, and a directory is expanded at most once per glob
// component, so symlink loops end. '.' and empty components are skipped; a
// '..' component matches nothing (callers refuse it with their own message).
std::vector<std::filesystem::path> glob_files(const std::filesystem::path& root, std::string_view glob,
                                              GlobLimits limits = {});

// For a glob that matched nothing: up to `count` files under any of `roots`
// (hidden directories included, same symlink rules) whose name matches the
// glob's last component, relative to their root, nearest to the glob's text
// first. Empty when the last component is `**`, which any file would match.
std::vector<std::string> glob_near_misses(std::span<const std::filesystem::path> roots, std::string_view glob,
                                          std::size_t count);

}  // namespace orc::util
