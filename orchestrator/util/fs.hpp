#pragma once
// The file-system primitives the whole tool shares: reading a file whole
// (regular files only, with a cap, so /dev/zero and FIFOs are errors rather
// than endless or blocking reads) and the write-to-temp, fsync, rename, fsync
// of the directory sequence that makes a reader see a whole file or none.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

namespace orc::util {

enum class FsErrorKind {
  not_found,    // cannot open (the reason says why: missing, permission)
  directory,    // the path is a directory
  not_regular,  // a FIFO, a device, a socket
  too_large,    // more than the cap (or it grew past it while read)
  exists,       // write_file_atomic with Replace::refuse found the target
  io,           // reading, writing, syncing or renaming failed
};

struct FsError {
  FsErrorKind kind = FsErrorKind::io;
  std::string reason;      // "it is a directory", "larger than 16 MiB", strerror
  std::string message;     // "<path>: <reason>"
  std::uint64_t size = 0;  // the file's size, for too_large
  int error_number = 0;    // the errno behind it, when one is (ENOSPC, EROFS: callers word those)
};

// The cap most readers want: config files, manifests, keys, small records.
constexpr std::uint64_t k_default_read_cap = std::uint64_t{64} << 20;
constexpr std::uint64_t k_no_read_cap = std::numeric_limits<std::uint64_t>::max();

// The bytes of the regular file at `path`, at most `max_bytes` of them (the
// cap is enforced while reading too: /proc files say size 0).
std::expected<std::string, FsError> read_file(const std::filesystem::path& path,
                                              std::uint64_t max_bytes = k_default_read_cap);

// A name in `dir` no other thread or process uses: stem, pid, a process-wide
// counter, ".tmp" (the store's gc recognises stale temporaries by the suffix).
std::filesystem::path temp_name(const std::filesystem::path& dir, std::string_view stem);

// fsyncs a directory so a rename into it survives a crash; failures are
// ignored (some file systems refuse fsync on directories).
void fsync_dir(const std::filesystem::path& dir);

enum class Replace { allow, refuse };

struct AtomicWrite {
  // Where the temporary goes (same file system as the target); empty: the
  // target's directory.
  std::filesystem::path tmp_dir;
  unsigned mode = 0644;  // set before any byte is written (0600 for keys)
  Replace replace = Replace::allow;
};

// Writes `bytes` to `target`: temp file, write, fsync, rename, fsync of the
// directory; creates the target's directory. On any failure the temporary
// is removed and the target is as it was. With Replace::refuse an existing
// target is an `exists` error.
std::expected<void, FsError> write_file_atomic(const std::filesystem::path& target, std::string_view bytes,
                                               const AtomicWrite& how = {});

// Moves a complete temporary file to `target` without ever replacing an
// existing file (renameat2 RENAME_NOREPLACE, else link + unlink). Returns
// false when the target already existed (the temporary is removed).
std::expected<bool, FsError> commit_no_replace(const std::filesystem::path& temp, const std::filesystem::path& target);

}  // namespace orc::util
