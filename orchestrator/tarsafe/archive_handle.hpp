#pragma once
// The one owner of libarchive's handles: every module that reads or writes
// an archive through libarchive holds it in these, as net/ holds curl's.
// libarchive's types are only named here; its header stays in the .cpp
// files that call it.
#include <cstddef>
#include <expected>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct archive;
struct archive_entry;

namespace orc::tarsafe {

struct ReadArchiveFree {
  void operator()(archive* a) const;
};
struct WriteArchiveFree {
  void operator()(archive* a) const;
};
struct ArchiveEntryFree {
  void operator()(archive_entry* e) const;
};

using ReadArchive = std::unique_ptr<archive, ReadArchiveFree>;
using WriteArchive = std::unique_ptr<archive, WriteArchiveFree>;
using ArchiveEntry = std::unique_ptr<archive_entry, ArchiveEntryFree>;

// archive_read_new, archive_write_new, archive_write_disk_new and
// archive_entry_new; each throws std::bad_alloc where libarchive returns
// nullptr (it allocates nothing else that can fail).
ReadArchive new_read_archive();
WriteArchive new_write_archive();
WriteArchive new_disk_writer();
ArchiveEntry new_archive_entry();

// Fills the buffer from a stream: the bytes read (0 at its end), or why not.
using ChunkRead = std::function<std::expected<std::size_t, std::string>(std::span<std::byte>)>;

// A read archive fed from a ChunkRead through a buffer of `chunk` bytes,
// which lives as long as this; a failed read becomes the archive's error
// (EIO, with the reader's text). Keep it alive until the archive is freed.
class ReadStream {
 public:
  ReadStream(const ChunkRead& read, std::size_t chunk) : m_read(&read), m_buffer(chunk) {}
  // archive_read_open on this stream, after the formats and filters are
  // set; libarchive's status (ARCHIVE_OK when it opened).
  int open(archive* a);

 private:
  friend struct ReadStreamCallback;
  const ChunkRead* m_read;
  std::vector<std::byte> m_buffer;
};

// "what: libarchive's error text", or `what` alone when it has none.
std::string error_text(archive* a, std::string_view what);

}  // namespace orc::tarsafe
