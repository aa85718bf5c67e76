#pragma once
// Hand-made tar+zstd archives for the cache tests: hostile ones (absolute
// names, escaping links, devices) that pack() would never write.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <string>
#include <vector>

namespace orc::cache::testing {

// One entry of a hand-made (hostile) tar.
struct RawEntry {
  std::string name;
  mode_t type = AE_IFREG;
  std::string data;      // file contents
  std::string link;      // symlink target
  std::string hardlink;  // hardlink target
  mode_t perm = 0644;    // permission bits, setuid/setgid/sticky included
};

inline void write_tar(const std::filesystem::path& path, const std::vector<RawEntry>& entries) {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_zstd(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const auto& r : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, r.name.c_str());
    archive_entry_set_filetype(e, r.type);
    archive_entry_set_perm(e, r.perm);
    if (!r.link.empty()) archive_entry_set_symlink(e, r.link.c_str());
    if (!r.hardlink.empty()) archive_entry_set_hardlink(e, r.hardlink.c_str());
    if (r.type == AE_IFCHR) archive_entry_set_rdev(e, makedev(1, 3));
    archive_entry_set_size(e, static_cast<la_int64_t>(r.data.size()));
    archive_write_header(a, e);
    if (!r.data.empty()) archive_write_data(a, r.data.data(), r.data.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

}  // namespace orc::cache::testing
