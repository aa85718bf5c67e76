#pragma once
// Artifact sets as one file: tar + zstd (libarchive, kept out of this header).
//
// pack() is deterministic: the same files make the same bytes, so the pack's
// digest is stable across machines. Entries sorted by name, mtime 0, uid/gid
// 0, no user or group names, permission bits kept (setuid/setgid dropped).
//
// unpack() treats the archive as hostile. It refuses (naming the entry)
// absolute names, '..' components, symlinks whose target is absolute or climbs
// out of the directory, anything written through a symlink, hardlinks to
// anything but a file already unpacked, device files, fifos and sockets,
// duplicate names. It unpacks into a fresh temporary directory beside DIR
// and renames it to DIR only when every entry was accepted, so a refusal
// leaves nothing behind, and nothing is ever written outside DIR.
#include <expected>
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/cache/error.hpp"

namespace orc::cache {

struct PackEntry {
  std::string name;              // in the archive: "lib/libx.so"
  std::filesystem::path source;  // a regular file or a symlink on disk
};

// Writes `out` atomically (temp in its directory, fsync, rename).
std::expected<void, Error> pack(std::vector<PackEntry> entries, const std::filesystem::path& out);

struct UnpackedFile {
  std::string name;
  std::uint64_t size = 0;
  std::string sha256;  // hex; only with UnpackOptions::hash
  unsigned mode = 0;   // permission bits, as the archive gave them
};

struct UnpackOptions {
  // fsync every file before the rename: for what goes into the store. A
  // fetch's DIR is the user's output, not the store, and is left to the
  // kernel's writeback like any other program's output.
  bool sync = true;
  // Hash each file while it is written (UnpackedFile::sha256), so a caller
  // that checks digests does not read the files back.
  bool hash = false;
};

// `dir` must not exist, or be an empty directory. A refusal is an error of
// kind invalid whose message names the entry.
std::expected<std::vector<UnpackedFile>, Error> unpack(const std::filesystem::path& archive,
                                                       const std::filesystem::path& dir);
std::expected<std::vector<UnpackedFile>, Error> unpack(const std::filesystem::path& archive,
                                                       const std::filesystem::path& dir, const UnpackOptions& options);

struct PlacedFile {
  std::string name;              // relative, refused as unpack() refuses an entry name
  std::filesystem::path source;  // a regular file, already checked by the caller
  unsigned mode = 0644;
};

// Writes `dir` (it must not exist, or be empty) from files just unpacked and
// verified elsewhere (a pull's store blobs), each copied in the kernel
// (copy_file_range), through a temporary directory beside it renamed into
// place, so a failure leaves nothing. Not fsynced: see UnpackOptions::sync.
std::expected<void, Error> place_files(const std::vector<PlacedFile>& files, const std::filesystem::path& dir);

}  // namespace orc::cache
