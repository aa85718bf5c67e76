#pragma once
// Archives written in memory with libarchive's writer: the tests' side of
// the formats (the readers under test never see how they were made).
#include <archive.h>

#include <functional>
#include <string>

namespace orc::inspect::testing {

// A writer in `format` with `filter` (ARCHIVE_FILTER_NONE for none); `add`
// writes the entries; the archive's bytes come back.
inline std::string write_archive(int format, int filter, const std::function<void(struct archive*)>& add) {
  std::string out;
  struct archive* a = archive_write_new();
  archive_write_set_format(a, format);
  if (filter != ARCHIVE_FILTER_NONE) archive_write_add_filter(a, filter);
  archive_write_set_bytes_in_last_block(a, 1);
  archive_write_open(
      a, &out, nullptr,
      [](struct archive*, void* client, const void* buffer, size_t length) -> la_ssize_t {
        static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
        return static_cast<la_ssize_t>(length);
      },
      nullptr);
  add(a);
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

}  // namespace orc::inspect::testing
