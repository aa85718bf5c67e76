#pragma once
// A whole file mapped read-only into memory (private to the inspect module).
// Listing and hashing both read every byte of files that can be hundreds of
// megabytes (libcublasLt.so.13 is 540 MB); mapping them lets the kernel page
// them in on demand instead of copying them into a buffer first.
//
// A mapped file can change under its reader. Pages past a new, shorter end
// raise SIGBUS when read, which would kill the process; reads made under a
// ReadGuard survive it (see ReadGuard), and changed() then says what
// happened, so the caller reports the file instead of dying.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>

#include "orchestrator/inspect/bytes.hpp"

namespace orc::inspect {

class MappedFile {
 public:
  // Maps `path` (after following symlinks). An empty file maps to no bytes;
  // the error is strerror's text ("No such file or directory", ...).
  static std::expected<MappedFile, std::string> open(const std::filesystem::path& path);

  MappedFile() = default;
  // Not while a ReadGuard holds the file: the guard points at it.
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  Bytes bytes() const { return {static_cast<const std::byte*>(m_data), static_cast<std::size_t>(m_size)}; }
  std::uint64_t size() const { return m_size; }

  // Why the bytes read may not be the file's, once the reads are done: it
  // shrank under a guarded read, or its size or modification time is no
  // longer what it was when mapped (the same file, looked up by its path
  // again; a file replaced by a rename leaves the mapped one intact). Empty
  // when the file held still. The text follows "FILE: ".
  std::optional<std::string> changed() const;

 private:
  friend class ReadGuard;
  void release() noexcept;

  void* m_data = nullptr;  // nullptr for an empty file
  std::uint64_t m_size = 0;
  std::filesystem::path m_path;
  dev_t m_device = 0;
  ino_t m_inode = 0;
  timespec m_modified{};
  // Set by the SIGBUS handler, on whichever thread read past the new end.
  std::atomic<bool> m_cut_short{false};
};

// Reads of `file` on this thread, while the guard lives, survive the file
// shrinking under them. On a SIGBUS at an address inside the mapping, the
// handler maps anonymous zero pages over the rest of it (MAP_FIXED, from the
// faulting page to the end) and marks the file; the faulting read is then
// retried by the CPU and reads zeros, and so does every later one past the
// new end. The reader finishes normally with nonsense for those bytes, which
// the caller throws away after changed() says so.
//
// Zero pages rather than siglongjmp out of the handler: the reads happen
// deep inside C++ parsers, OpenSSL and libarchive, and jumping over their
// frames would skip destructors and leave their state half-updated. The
// handler uses only mmap (a raw system call on Linux; POSIX does not list it
// as async-signal-safe, but it takes no lock in glibc) and atomics, and
// reads only this thread's own chain of guards, so parallel readers of one
// or many files need no lock. SIGBUS not caused by a guarded read goes to the
// handler that was there before, or kills the process as it would have.
class ReadGuard {
 public:
  explicit ReadGuard(MappedFile& file);
  ~ReadGuard();
  ReadGuard(const ReadGuard&) = delete;
  ReadGuard& operator=(const ReadGuard&) = delete;

 private:
  friend struct BusErrorHandler;  // mapped_file.cpp: reads the chain from the signal handler
  std::uintptr_t m_begin = 0;
  std::uintptr_t m_end = 0;  // m_begin + the mapping's length, rounded up to whole pages
  std::atomic<bool>* m_cut_short = nullptr;
  const ReadGuard* m_outer = nullptr;  // the guard this one nests in, on this thread
};

}  // namespace orc::inspect
