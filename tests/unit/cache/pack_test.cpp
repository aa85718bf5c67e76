// Deterministic packs, and the unpacker refusing every way out of DIR.
#include "orchestrator/cache/pack.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include "raw_tar.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;
using testing::RawEntry;
using testing::write_tar;

class Pack : public testing::TempDirTest {
 protected:
  // Everything under `dir`, relative, sorted: to see that nothing appeared.
  static std::vector<std::string> tree(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(e.path().lexically_relative(dir));
    std::ranges::sort(out);
    return out;
  }
};

TEST_F(Pack, SameFilesMakeTheSameBytesAndUnpackKeepsModes) {
  const auto lib = write("src/lib/libx.so", "ELF bytes");
  const auto tool = write("src/bin/tool", "#!/bin/sh\n");
  fs::permissions(tool, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  fs::create_symlink("libx.so", m_dir / "src/lib/libx.so.1");
  const std::vector<PackEntry> entries{
      {"lib/libx.so", lib}, {"bin/tool", tool}, {"lib/libx.so.1", m_dir / "src/lib/libx.so.1"}};
  ASSERT_TRUE(pack(entries, m_dir / "one.tar.zst"));
  // Another time, other order: the same bytes.
  fs::last_write_time(lib, fs::file_time_type::clock::now() - std::chrono::hours(5));
  ASSERT_TRUE(pack({entries[2], entries[1], entries[0]}, m_dir / "two.tar.zst"));
  EXPECT_EQ(slurp(m_dir / "one.tar.zst"), slurp(m_dir / "two.tar.zst"));

  const auto files = unpack(m_dir / "one.tar.zst", m_dir / "out");
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(files->size(), 2u);
  EXPECT_EQ(slurp(m_dir / "out/lib/libx.so"), "ELF bytes");
  EXPECT_EQ(fs::read_symlink(m_dir / "out/lib/libx.so.1"), "libx.so");
  EXPECT_EQ(fs::status(m_dir / "out/bin/tool").permissions() & fs::perms::all,
            fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  EXPECT_EQ(tree(m_dir),
            (std::vector<std::string>{"one.tar.zst", "out", "out/bin", "out/bin/tool", "out/lib", "out/lib/libx.so",
                                      "out/lib/libx.so.1", "src", "src/bin", "src/bin/tool", "src/lib",
                                      "src/lib/libx.so", "src/lib/libx.so.1", "two.tar.zst"}));
}

TEST_F(Pack, PackRefusesNamesThatWouldNotUnpack) {
  const auto f = write("f", "x");
  EXPECT_FALSE(pack({{"../f", f}}, m_dir / "p.tar.zst"));
  EXPECT_FALSE(pack({{"/f", f}}, m_dir / "p.tar.zst"));
  EXPECT_FALSE(pack({{"f", f}, {"f", f}}, m_dir / "p.tar.zst"));
  EXPECT_FALSE(fs::exists(m_dir / "p.tar.zst"));
}

TEST_F(Pack, UnpackNeedsANewOrEmptyDirectory) {
  const auto f = write("f", "x");
  ASSERT_TRUE(pack({{"f", f}}, m_dir / "p.tar.zst"));
  write("full/keep", "mine");
  EXPECT_EQ(unpack(m_dir / "p.tar.zst", m_dir / "full").error().kind, ErrorKind::invalid);
  EXPECT_EQ(slurp(m_dir / "full/keep"), "mine");
  fs::create_directories(m_dir / "empty");
  EXPECT_TRUE(unpack(m_dir / "p.tar.zst", m_dir / "empty"));
  EXPECT_EQ(slurp(m_dir / "empty/f"), "x");
}

struct Hostile {
  std::string label;
  std::vector<RawEntry> entries;
  std::string refused;  // the entry the error must name
};

// Each archive starts with a harmless file, so a refusal must also undo it.
TEST_F(Pack, UnpackRefusesEveryWayOutAndLeavesNothingBehind) {
  const std::vector<Hostile> cases = {
      {"dot-dot", {{.name = "ok", .data = "1"}, {.name = "../x", .data = "evil"}}, "../x"},
      {"nested dot-dot", {{.name = "ok", .data = "1"}, {.name = "a/../../x", .data = "evil"}}, "a/../../x"},
      {"absolute", {{.name = "ok", .data = "1"}, {.name = "/abs/x", .data = "evil"}}, "/abs/x"},
      {"symlink escape", {{.name = "ok", .data = "1"}, {.name = "a", .type = AE_IFLNK, .link = "../../etc"}}, "a"},
      {"absolute symlink", {{.name = "a", .type = AE_IFLNK, .link = "/etc"}}, "a"},
      {"symlink dot-dot after a name",
       {{.name = "d/p", .type = AE_IFLNK, .link = ".."}, {.name = "q", .type = AE_IFLNK, .link = "d/p/.."}},
       "q"},
      {"file through a symlink",
       {{.name = "sub/f", .data = "1"},
        {.name = "a", .type = AE_IFLNK, .link = "sub"},
        {.name = "a/x", .data = "evil"}},
       "a/x"},
      {"file through an escaping symlink",
       {{.name = "a", .type = AE_IFLNK, .link = "../outside"}, {.name = "a/x", .data = "evil"}},
       "a"},
      {"hardlink out", {{.name = "ok", .data = "1"}, {.name = "h", .hardlink = "/etc/passwd"}}, "h"},
      {"hardlink dot-dot", {{.name = "ok", .data = "1"}, {.name = "h", .hardlink = "../outside/secret"}}, "h"},
      {"hardlink to a symlink", {{.name = "s", .type = AE_IFLNK, .link = "ok"}, {.name = "h", .hardlink = "s"}}, "h"},
      {"char device", {{.name = "ok", .data = "1"}, {.name = "null", .type = AE_IFCHR}}, "null"},
      {"fifo", {{.name = "ok", .data = "1"}, {.name = "pipe", .type = AE_IFIFO}}, "pipe"},
      {"duplicate", {{.name = "ok", .data = "1"}, {.name = "ok", .data = "2"}}, "ok"},
      // Accepted before the rules were shared with the engine's extractor
      // (orchestrator/tarsafe/rules.hpp): links in a loop, refused once the
      // last entry is in; an over-long name, an I/O error (exit 3) before.
      {"symlink loop",
       {{.name = "ok", .data = "1"},
        {.name = "a", .type = AE_IFLNK, .link = "b"},
        {.name = "b", .type = AE_IFLNK, .link = "a"}},
       "a"},
      {"over-long name",
       {{.name = "ok", .data = "1"}, {.name = "d/" + std::string(256, 'n'), .data = "x"}},
       "d/" + std::string(256, 'n')},
  };
  write("outside/secret", "keep");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.label);
    const fs::path dir = m_dir / "work" / "DIR";
    fs::create_directories(dir.parent_path());
    const auto tar = m_dir / "hostile.tar.zst";
    write_tar(tar, c.entries);
    const auto result = unpack(tar, dir);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, ErrorKind::invalid);
    EXPECT_NE(result.error().message.find("'" + c.refused + "'"), std::string::npos) << result.error().message;
    // Nothing at DIR, no temporary beside it, nothing new anywhere else.
    EXPECT_TRUE(fs::is_empty(dir.parent_path())) << tree(dir.parent_path()).front();
    EXPECT_EQ(tree(m_dir), (std::vector<std::string>{"hostile.tar.zst", "outside", "outside/secret", "work"}));
    EXPECT_EQ(slurp(m_dir / "outside/secret"), "keep");
  }
}

TEST_F(Pack, InsideLinksAndHardlinksAreAccepted) {
  write_tar(m_dir / "ok.tar.zst", {{.name = "lib/libx.so.1", .data = "so"},
                                   {.name = "lib/libx.so", .type = AE_IFLNK, .link = "libx.so.1"},
                                   {.name = "bin/lib", .type = AE_IFLNK, .link = "../lib"},
                                   {.name = "lib/copy", .hardlink = "lib/libx.so.1"},
                                   {.name = "empty", .type = AE_IFDIR}});
  const auto files = unpack(m_dir / "ok.tar.zst", m_dir / "out");
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(slurp(m_dir / "out/bin/lib/libx.so"), "so");
  EXPECT_EQ(slurp(m_dir / "out/lib/copy"), "so");
  EXPECT_TRUE(fs::is_directory(m_dir / "out/empty"));
}

// Refused before ("empty name"); the engine's extractor took it, and docker
// and podman exports carry it, so the shared rules accept it and it makes
// nothing.
TEST_F(Pack, TheRootEntryIsAccepted) {
  write_tar(m_dir / "root.tar.zst", {{.name = "./", .type = AE_IFDIR, .perm = 0777},
                                     {.name = "./lib/libx.so", .data = "so"},
                                     {.name = ".", .type = AE_IFDIR}});
  const auto files = unpack(m_dir / "root.tar.zst", m_dir / "out");
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ(slurp(m_dir / "out/lib/libx.so"), "so");
  EXPECT_EQ(fs::status(m_dir / "out").permissions(), static_cast<fs::perms>(0755));
}

// The loop's message, as the engine's extractor words it.
TEST_F(Pack, ASymlinkLoopIsRefusedByTheSharedRule) {
  write_tar(m_dir / "loop.tar.zst",
            {{.name = "a", .type = AE_IFLNK, .link = "b"}, {.name = "b", .type = AE_IFLNK, .link = "a"}});
  const auto result = unpack(m_dir / "loop.tar.zst", m_dir / "out");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::invalid);
  EXPECT_EQ(result.error().message, "refused archive entry 'a': it is a symlink ('b') in a loop");
  EXPECT_FALSE(fs::exists(m_dir / "out"));
}

TEST_F(Pack, DamagedArchiveIsRefused) {
  const auto f = write("f", std::string(100000, 'x'));
  ASSERT_TRUE(pack({{"f", f}}, m_dir / "p.tar.zst"));
  std::string bytes = slurp(m_dir / "p.tar.zst");
  write("cut.tar.zst", bytes.substr(0, bytes.size() / 2));
  EXPECT_FALSE(unpack(m_dir / "cut.tar.zst", m_dir / "out"));
  EXPECT_FALSE(fs::exists(m_dir / "out"));
}

}  // namespace
}  // namespace orc::cache
