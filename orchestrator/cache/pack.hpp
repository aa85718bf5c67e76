#pragma once
// Artifact sets as one file: tar + zstd (libarchive, kept out of this header).
//
// pack() is deterministic: the same files make the same bytes, so the pack's
// digest is stable across machines. Entries sorted by name, mtime 0, uid/gid
// 0, no user or group names, permission bits kept (setuid/setgid dropped).
//
// unpack() treats the archive as hostile: every entry goes through the rules
// it shares with the engine's extractor (orchestrator/tarsafe/rules.hpp). It
// refuses (naming the entry) absolute names, '..' components, over-long
// names, symlinks whose target is absolute, climbs out of the directory or
// loops, anything written below a symlink or a file, hardlinks to anything
// but a file already unpacked, device files, fifos and sockets, duplicate
// names; a "./" root entry is accepted and makes nothing. It unpacks into a fresh temporary directory beside DIR
// and renames it to DIR only when every entry was accepted, so a refusal
// leaves nothing behind, and nothing is ever written outside DIR.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <expected>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/manifest.hpp"

namespace orc::cache {

struct PackEntry {
  std::string name;              // in the archive: "lib/libx.so"
  std::filesystem::path source;  // a regular file or a symlink on disk
  std::optional<unsigned> mode;  // a regular file's permission bits; unset: the source's
};

// Writes `out` atomically (temp in its directory, fsync, rename).
std::expected<void, Error> pack(std::vector<PackEntry> entries, const std::filesystem::path& out);

struct PackMember {
  std::string name;
  std::uint64_t size = 0;
  unsigned mode = 0;     // permission bits
  bool regular = false;  // a regular file (else a link, directory, ...)
};

// The members of a tar+zstd, read through without writing anything (for
// finding which set a stored pack holds); at most `max_members` of them.
// invalid when it is not a tar+zstd, or is damaged, or holds more.
std::expected<std::vector<PackMember>, Error> list_pack(const std::filesystem::path& archive, std::size_t max_members);

struct UnpackedFile {
  std::string name;
  std::uint64_t size = 0;
  std::string sha256;    // hex; only with UnpackOptions::hash
  unsigned mode = 0;     // permission bits, as the archive gave them
  bool chunked = false;  // verified by its signed chunks (UnpackOptions::signed_file)
};

struct UnpackOptions {
  // fsync every file before the rename: for what goes into the store. A
  // fetch's DIR is the user's output, not the store, and is left to the
  // kernel's writeback like any other program's output.
  bool sync = true;
  // Hash each file while it is written (UnpackedFile::sha256), on a thread of
  // its own, so a caller that checks digests does not read the files back.
  bool hash = false;
  // Also write every entry into this second directory (it must not exist, or
  // be empty), never synced: a fetch's DIR filled from the same pass over the
  // archive as the store's copy. It is renamed into place after `dir`.
  std::filesystem::path mirror;
  // Refuse the archive once its files hold more than this many bytes (zero:
  // no limit): a pull knows the total from the signed manifest, so a
  // decompression bomb stops there instead of filling the disk.
  std::uint64_t max_bytes = 0;
  // Called for each entry before anything is made for it, with its name,
  // size and mode (setuid, setgid and sticky bits included); it returns the
  // permission bits the file gets, and an error refuses the archive. When
  // set, only regular files are admitted (a link or device is refused, a
  // directory entry is not made: the files' directories are), so nothing
  // but what it admits is created (SignedFiles::admit is the one a set's
  // layer gets).
  std::function<std::expected<unsigned, Error>(std::string_view name, std::uint64_t size, unsigned mode)> admit;
  // With `hash`: the signed manifest's entry for a file, or null. A file it
  // gives chunks for is checked chunk by chunk on several threads (chunks.hpp)
  // instead of hashed whole on one; once every chunk matched, its sha256 is
  // the manifest's, and a chunk that does not match refuses the archive.
  std::function<const ManifestFile*(std::string_view name)> signed_file;
  // Called with every file written, before anything is renamed into place;
  // an error refuses the archive (a pull compares the digests with the signed
  // manifest here, so no unverified byte ever appears in `dir` or `mirror`).
  std::function<std::expected<void, Error>(const std::vector<UnpackedFile>&)> check;
};

// An archive's bytes as they arrive (a download). next() blocks until some
// arrive and returns them (valid until the next call), an empty span at the
// end, or the error that ended the transfer.
class ArchiveStream {
 public:
  virtual ~ArchiveStream() = default;
  virtual std::expected<std::span<const std::byte>, Error> next() = 0;
};

// The ArchiveStream between two threads: the downloading one push()es bytes
// as they arrive (copied into 4 MiB blocks; it waits while four are queued),
// then finish() or fail(); the unpacking one reads. After close() (the
// reader gave up, or is done) push() returns false, so the download stops.
class ArchivePipe final : public ArchiveStream {
 public:
  bool push(std::span<const std::byte> bytes);
  void finish();
  void fail(Error error);
  void close();
  // Reads and drops what is left until finish() or fail(): the bytes after
  // the archive's end marker. Whether the stream ended well.
  bool drain();
  std::expected<std::span<const std::byte>, Error> next() override;

 private:
  bool hand_over(std::unique_lock<std::mutex>& lock);
  static constexpr std::size_t k_block = 4 << 20;
  static constexpr std::size_t k_max_queued = 4;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<std::vector<std::byte>> m_queue;
  std::vector<std::vector<std::byte>> m_spare;
  std::vector<std::byte> m_filling;  // the writer's
  std::vector<std::byte> m_reading;  // the reader's, returned by next()
  bool m_finished = false;
  bool m_closed = false;
  std::optional<Error> m_failure;
};

// `dir` must not exist, or be an empty directory. A refusal is an error of
// kind invalid whose message names the entry.
std::expected<std::vector<UnpackedFile>, Error> unpack(const std::filesystem::path& archive,
                                                       const std::filesystem::path& dir);
std::expected<std::vector<UnpackedFile>, Error> unpack(const std::filesystem::path& archive,
                                                       const std::filesystem::path& dir, const UnpackOptions& options);
// The same from a stream: an error of the stream itself is returned as it
// came, not as a damaged archive.
std::expected<std::vector<UnpackedFile>, Error> unpack_stream(ArchiveStream& archive, const std::filesystem::path& dir,
                                                              const UnpackOptions& options);

// Removes, in `dir`, the temporary trees of unpacks whose process is gone
// (killed mid-way; their names carry the pid). Returns how many.
std::size_t remove_abandoned_unpacks(const std::filesystem::path& dir);

struct PlacedFile {
  std::string name;              // relative, refused as unpack() refuses an entry name
  std::filesystem::path source;  // a regular file, already checked by the caller
  unsigned mode = 0644;
};

struct PlaceOptions {
  // As UnpackOptions::check: called before anything is renamed into place.
  std::function<std::expected<void, Error>(const std::vector<UnpackedFile>&)> check;
};

// Writes `dir` (it must not exist, or be empty) from stored files (a set
// kept as file blobs), each hashed as it is copied (UnpackedFile::sha256), so
// what lands in `dir` is what was checked, through a temporary directory
// beside it renamed into place, so a failure leaves nothing. Not fsynced:
// see UnpackOptions::sync.
std::expected<std::vector<UnpackedFile>, Error> place_files(const std::vector<PlacedFile>& files,
                                                            const std::filesystem::path& dir,
                                                            const PlaceOptions& options = {});

}  // namespace orc::cache
