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

}  // namespace orc::engine
