// File access for load_config and include: reading with limits, and include
// patterns expanded by the schema's one glob (util/glob.hpp).
#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/glob.hpp"

namespace orc::recipe::detail {

std::expected<std::string, std::string> read_file(const std::filesystem::path& path) {
  auto text = util::read_file(path, k_max_file_bytes);
  if (!text) return std::unexpected(text.error().reason);
  return std::move(*text);
}

std::expected<std::vector<std::filesystem::path>, std::string> expand_include(const SourceFile& including,
                                                                              const std::string& pattern) {
  namespace fs = std::filesystem;
  if (pattern.empty()) return std::unexpected("empty include path");
  const fs::path written(pattern);
  if (written.filename().empty()) return std::unexpected("include '" + pattern + "' names a directory, not a file");
  const fs::path full = (written.is_absolute() ? written : including.base_dir() / written).lexically_normal();
  // The components before the first wildcard name one directory, the root
  // the glob walks from (a symlinked directory under it is entered only when
  // it stays inside it); the rest is the glob.
  fs::path dir, glob;
  for (const auto& part : full) {
    if (glob.empty() && !util::glob_has_wildcard(part.string()))
      dir /= part;
    else
      glob /= part;
  }
  if (glob.empty()) return std::vector<fs::path>{full};

  const fs::path listed = dir.empty() ? "." : dir;
  std::error_code ec;
  if (fs::directory_iterator probe(listed, ec); ec)
    return std::unexpected("cannot list " + listed.string() + ": " + ec.message());
  const auto found = util::glob_files(listed, glob.generic_string(), {.max_matches = k_max_included_files});
  if (found.size() > k_max_included_files)
    return std::unexpected("include '" + pattern + "' matches more than " + std::to_string(k_max_included_files) +
                           " files");
  std::vector<fs::path> matches;
  for (const auto& rel : found) matches.push_back(dir / rel);
  return matches;
}

}  // namespace orc::recipe::detail
