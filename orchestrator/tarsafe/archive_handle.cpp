#include "orchestrator/tarsafe/archive_handle.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <cerrno>
#include <new>

namespace orc::tarsafe {

namespace {

template <typename T>
T* allocated(T* handle) {
  if (!handle) throw std::bad_alloc();
  return handle;
}

}  // namespace

struct ReadStreamCallback {
  static la_ssize_t read(archive* a, void* context, const void** out) {
    auto* stream = static_cast<ReadStream*>(context);
    auto n = (*stream->m_read)(stream->m_buffer);
    if (!n) {
      archive_set_error(a, EIO, "%s", n.error().c_str());
      return -1;
    }
    *out = stream->m_buffer.data();
    return static_cast<la_ssize_t>(*n);
  }
};

int ReadStream::open(archive* a) { return archive_read_open(a, this, nullptr, ReadStreamCallback::read, nullptr); }

std::string error_text(archive* a, std::string_view what) {
  const char* m = archive_error_string(a);
  return std::string(what) + (m ? std::string(": ") + m : std::string());
}

// archive_write_free closes first (flushing a writer's last block); both
// accept the handles of every archive_*_new.
void ReadArchiveFree::operator()(archive* a) const { archive_read_free(a); }
void WriteArchiveFree::operator()(archive* a) const { archive_write_free(a); }
void ArchiveEntryFree::operator()(archive_entry* e) const { archive_entry_free(e); }

ReadArchive new_read_archive() { return ReadArchive(allocated(archive_read_new())); }
WriteArchive new_write_archive() { return WriteArchive(allocated(archive_write_new())); }
WriteArchive new_disk_writer() { return WriteArchive(allocated(archive_write_disk_new())); }
ArchiveEntry new_archive_entry() { return ArchiveEntry(allocated(archive_entry_new())); }

}  // namespace orc::tarsafe
