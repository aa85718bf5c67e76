#pragma once
// Image layers written in memory (tar, with or without a compressor) and
// read back as the stream an ImageScanner pulls.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "orchestrator/inspect/package.hpp"
#include "tests/unit/inspect/archive_writer.hpp"

namespace orc::inspect::testing {

struct Entry {
  std::string path;
  std::string data;  // for files
  int type = AE_IFREG;
  std::string link;  // symlink or hard link target
};

inline void write_entry(struct archive* a, const Entry& e) {
  struct archive_entry* h = archive_entry_new();
  archive_entry_set_pathname(h, e.path.c_str());
  archive_entry_set_filetype(h, static_cast<unsigned>(e.type));
  archive_entry_set_perm(h, 0755);
  if (e.type == AE_IFLNK) archive_entry_set_symlink(h, e.link.c_str());
  if (e.type == AE_IFREG && !e.link.empty()) archive_entry_set_hardlink(h, e.link.c_str());
  archive_entry_set_size(h, static_cast<la_int64_t>(e.data.size()));
  archive_write_header(a, h);
  if (!e.data.empty()) archive_write_data(a, e.data.data(), e.data.size());
  archive_entry_free(h);
}

inline std::string make_tar(const std::vector<Entry>& entries, int filter = ARCHIVE_FILTER_NONE) {
  return write_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, filter, [&](struct archive* a) {
    for (const auto& e : entries) write_entry(a, e);
  });
}

// The bytes as a stream; `bytes` must outlive it.
inline StreamRead from(const std::string& bytes) {
  auto at = std::make_shared<std::size_t>(0);
  return [&bytes, at](std::span<std::byte> out) -> std::expected<std::size_t, std::string> {
    const std::size_t n = std::min(out.size(), bytes.size() - *at);
    std::memcpy(out.data(), bytes.data() + *at, n);
    *at += n;
    return n;
  };
}

}  // namespace orc::inspect::testing
