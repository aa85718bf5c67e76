#pragma once
// Tar archives to and from the engine, through libarchive (whose types stay
// in the .cpp files).
//
// Tars coming out of a container (GET /containers/{id}/archive) are
// untrusted: whatever ran in the container chose their entries. extract_tar
// reads the whole archive's headers first and refuses it, writing nothing,
// when any entry
//   - has an absolute path, or a ".." component;
//   - is a device, FIFO or socket;
//   - is a symlink whose target is absolute, or that leaves the destination
//     when resolved (following the archive's own symlinks, ".." included);
//   - is a hard link to anything but a regular file earlier in the archive;
//   - lies below one of the archive's symlinks (writing through a link);
//   - repeats an earlier path (unless both are directories).
// Only then does it extract, with libarchive's own checks on as well (no
// writing through symlinks already on disk). Set-user-ID bits and owners
// are not restored: files belong to the user running us.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>
#include <string_view>

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

// An archive entry's path in the normalized form the rules check: no
// leading "./", no "." or empty components. Fails for absolute paths and
// ".." components; "" is the archive's root entry (".").
std::expected<std::string, std::string> normalize_entry_path(std::string_view raw);

// Writes `dir`'s tree as a tar (a build context for POST /build): regular
// files, directories and symlinks (stored as links, not followed), paths
// relative to `dir` in sorted order, owned by 0:0. Anything else in the
// tree (a socket, a device) is an invalid_spec error.
std::expected<std::uint64_t, Error> write_context_tar(const std::filesystem::path& dir,
                                                      const std::filesystem::path& tar);

}  // namespace orc::engine
