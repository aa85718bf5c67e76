#include "orchestrator/engine/source_tar.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "orchestrator/engine/archive.hpp"

namespace orc::engine {

namespace {

namespace fs = std::filesystem;

Error io_error(const std::string& what) { return Error{.kind = ErrorKind::io, .message = what}; }

bool under_git(const fs::path& relative) {
  return std::ranges::any_of(relative, [](const fs::path& part) { return part == ".git"; });
}

}  // namespace

std::expected<std::uint64_t, Error> write_source_tar(const fs::path& dir, const fs::path& tar) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::unexpected(io_error("source " + dir.string() + " is not a directory"));
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(dir);
    if (under_git(rel)) {
      if (it->is_directory() && !it->is_symlink()) it.disable_recursion_pending();
      continue;
    }
    names.push_back(rel.generic_string());
  }
  if (ec) return std::unexpected(io_error("reading " + dir.string() + ": " + ec.message()));
  std::ranges::sort(names);

  return write_tree_tar(dir, names, tar, TarMetadata::normalized, "source " + dir.string());
}

}  // namespace orc::engine
