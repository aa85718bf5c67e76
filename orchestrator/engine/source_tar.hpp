#pragma once
// A recipe's source tree as one deterministic tar, the snapshot `k8s render
// --push` ships for a build Job: the same tree makes the same bytes on any
// machine and at any time, so a snapshot is named by its content. What is
// kept is what app/build's tree_hash reads (and so what a build sees):
// paths in sorted order, .git left out wherever it is, directories (0755),
// symlinks as links, regular files with their bytes and mode 0755 when the
// owner may execute them, else 0644; owner 0:0, mtime 0, no user or group
// names. Anything else (a socket, a device) is an invalid_spec error.
#include <cstdint>
#include <expected>
#include <filesystem>

#include "orchestrator/engine/error.hpp"

namespace orc::engine {

// Writes the tar to `tar`; the number of entries.
std::expected<std::uint64_t, Error> write_source_tar(const std::filesystem::path& dir,
                                                     const std::filesystem::path& tar);

}  // namespace orc::engine
