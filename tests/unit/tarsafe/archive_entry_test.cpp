// A libarchive header read as the rules' Entry: the kind from its type bits
// (a hard-link target deciding), the link, the mode bits, the size.
#include "orchestrator/tarsafe/archive_entry.hpp"

#include <archive_entry.h>
#include <gtest/gtest.h>

#include <memory>

namespace orc::tarsafe {
namespace {

struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using EntryPtr = std::unique_ptr<archive_entry, EntryFree>;

EntryPtr make(const char* name, mode_t type, mode_t perm) {
  EntryPtr e(archive_entry_new());
  archive_entry_set_pathname(e.get(), name);
  archive_entry_set_filetype(e.get(), type);
  archive_entry_set_perm(e.get(), perm);
  return e;
}

TEST(TarsafeArchiveEntry, ReadsAFile) {
  auto e = make("./out/k", AE_IFREG, 04755);
  archive_entry_set_size(e.get(), 12);
  const Entry entry = entry_of(e.get());
  EXPECT_EQ(entry.name, "./out/k");
  EXPECT_EQ(entry.kind, Kind::file);
  EXPECT_EQ(entry.link, "");
  EXPECT_EQ(entry.mode, 04755u);
  EXPECT_EQ(entry.size, 12u);
}

TEST(TarsafeArchiveEntry, ReadsLinksAndDevices) {
  auto sym = make("l", AE_IFLNK, 0777);
  archive_entry_set_symlink(sym.get(), "../t");
  EXPECT_EQ(entry_of(sym.get()).kind, Kind::symlink);
  EXPECT_EQ(entry_of(sym.get()).link, "../t");
  // A hard link is one whatever its type bits say.
  auto hard = make("h", AE_IFREG, 0644);
  archive_entry_set_hardlink(hard.get(), "out/k");
  EXPECT_EQ(entry_of(hard.get()).kind, Kind::hardlink);
  EXPECT_EQ(entry_of(hard.get()).link, "out/k");
  EXPECT_EQ(entry_of(make("null", AE_IFCHR, 0666).get()).kind, Kind::char_device);
  EXPECT_EQ(entry_of(make("pipe", AE_IFIFO, 0666).get()).kind, Kind::fifo);
  EXPECT_EQ(entry_of(make("d/", AE_IFDIR, 0755).get()).kind, Kind::directory);
}

}  // namespace
}  // namespace orc::tarsafe
