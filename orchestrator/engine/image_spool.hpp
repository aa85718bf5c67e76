#pragma once
// An image archive (GET /images/{id}/get, `docker save`) taken apart as it
// streams from the engine: each regular entry written to a file of its own
// in a directory and hashed on the way, so `images push` reads the
// engine's image once and holds each byte once on disk. Both archive
// layouts carry manifest.json: Docker before 25 (`<id>/layer.tar`,
// `<config hex>.json`) and the OCI layout of Docker 25+ and Podman
// (`blobs/sha256/<hex>`).
#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/digest/digest.hpp"
#include "orchestrator/engine/error.hpp"
#include "orchestrator/engine/image_archive.hpp"

namespace orc::engine {

struct SpooledEntry {
  std::string name;            // in the archive: "abc.../layer.tar"
  std::filesystem::path path;  // where its bytes are now
  digest::Digest digest;       // of its bytes
  std::uint64_t size = 0;
};

// Up to `max_entries` regular entries (links and directories are skipped:
// an archive's layer.tar symlinks point at an entry written once). Errors:
// protocol (not a tar, damaged), io (the directory).
std::expected<std::vector<SpooledEntry>, Error> spool_image_archive(const ArchiveSource& in,
                                                                    const std::filesystem::path& dir,
                                                                    std::size_t max_entries = 10'000);

}  // namespace orc::engine
