#pragma once
// Tar archives to and from the engine, through libarchive (whose types stay
// in the .cpp files).
//
// Tars coming out of a container (GET /containers/{id}/archive) are
// untrusted: whatever ran in the container chose their entries. extract_tar
// reads the whole archive's headers first through the rules every extractor
// shares (orchestrator/tarsafe/rules.hpp: absolute names, "..", devices,
// FIFOs, links that leave or loop, hard links to anything but an earlier
// file, writing below a link, repeats) and refuses it, writing nothing, when
// any entry breaks one. Only then does it extract, with libarchive's own
// checks on as well (no writing through symlinks already on disk). Modes are
// the rules' (no setuid, setgid or sticky bit); owners are not restored:
// files belong to the user running us.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/engine/error.hpp"

namespace orc::engine {

struct ExtractStats {
  std::uint64_t files = 0;
  std::uint64_t directories = 0;
  std::uint64_t symlinks = 0;
  std::uint64_t hardlinks = 0;
  std::uint64_t bytes = 0;  // of regular files
};

// Unpacks the tar at `tar` under `dest` (made if missing). Errors are
// unsafe_archive (naming the entry and the rule it broke), protocol (not a
// tar, truncated) or io.
std::expected<ExtractStats, Error> extract_tar(const std::filesystem::path& tar, const std::filesystem::path& dest);

// Writes `dir`'s tree as a tar (a build context for POST /build): regular
// files, directories and symlinks (stored as links, not followed), paths
// relative to `dir` in sorted order, owned by 0:0. Anything else in the
// tree (a socket, a device) is an invalid_spec error.
std::expected<std::uint64_t, Error> write_context_tar(const std::filesystem::path& dir,
                                                      const std::filesystem::path& tar);

// What write_tree_tar records of each entry besides its type, size and link.
enum class TarMetadata {
  kept,        // the permission bits and mtime on disk (a build context)
  normalized,  // mtime 0; 0755 for directories and owner-executable files, 0644 for
               // other files, 0777 for links: the same tree always gives the same bytes
};

// Writes the entries `names` of `dir` (relative, '/'-separated, in the
// order given) to `tar`, owned by 0:0, links stored as links; the number of
// entries. `what` names the tree in errors ("source /src"); an entry that is
// not a file, directory or symlink is an invalid_spec error.
std::expected<std::uint64_t, Error> write_tree_tar(const std::filesystem::path& dir,
                                                   const std::vector<std::string>& names,
                                                   const std::filesystem::path& tar, TarMetadata metadata,
                                                   std::string_view what);

}  // namespace orc::engine
