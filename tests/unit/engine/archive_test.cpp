// The extraction rules of archive.hpp against tars crafted entry by entry
// with libarchive: what a hostile container could put in its archive.
#include "orchestrator/engine/archive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace orc::engine {
namespace {

namespace fs = std::filesystem;

struct Item {
  std::string path;
  mode_t type = AE_IFREG;
  std::string data;      // regular files
  std::string link;      // symlink target
  std::string hardlink;  // hard-link target (as stored)
  mode_t perm = 0;       // 0: 0755 for a directory, 0644 for the rest
};

// Writes `items` as a pax tar at `tar`.
void write_tar(const fs::path& tar, const std::vector<Item>& items) {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  ASSERT_EQ(archive_write_open_filename(a, tar.c_str()), ARCHIVE_OK);
  for (const Item& item : items) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, item.path.c_str());
    archive_entry_set_filetype(e, item.type);
    archive_entry_set_perm(e, item.perm ? item.perm : item.type == AE_IFDIR ? 0755 : 0644);
    if (!item.hardlink.empty()) archive_entry_set_hardlink(e, item.hardlink.c_str());
    if (item.type == AE_IFLNK) archive_entry_set_symlink(e, item.link.c_str());
    if (item.type == AE_IFCHR) archive_entry_set_rdev(e, makedev(1, 3));
    if (item.type == AE_IFREG && item.hardlink.empty())
      archive_entry_set_size(e, static_cast<la_int64_t>(item.data.size()));
    archive_write_header(a, e);
    if (item.type == AE_IFREG && item.hardlink.empty()) archive_write_data(a, item.data.data(), item.data.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class Extract : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-engine-archive-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir / "dest");
  }
  void TearDown() override { fs::remove_all(m_dir); }

  // Extracts `items`; on refusal returns the message and checks that
  // nothing at all was written.
  std::string refusal(const std::vector<Item>& items) {
    write_tar(m_dir / "t.tar", items);
    auto stats = extract_tar(m_dir / "t.tar", m_dir / "dest");
    if (stats) return "extracted";
    EXPECT_EQ(stats.error().kind, ErrorKind::unsafe_archive) << stats.error().message;
    EXPECT_TRUE(fs::is_empty(m_dir / "dest")) << "a refused archive wrote files";
    return stats.error().message;
  }

  fs::path m_dir;
};

TEST_F(Extract, UnpacksFilesDirectoriesAndInsideLinks) {
  write_tar(m_dir / "t.tar", {{.path = "out/", .type = AE_IFDIR},
                              {.path = "out/k", .data = "kernel"},
                              {.path = "./out/sub/", .type = AE_IFDIR},
                              {.path = "out/sub/deep.txt", .data = "deep"},
                              {.path = "out/link", .type = AE_IFLNK, .link = "sub/deep.txt"},
                              {.path = "out/up", .type = AE_IFLNK, .link = "../out/k"},
                              {.path = "out/hard", .hardlink = "out/k"}});
  auto stats = extract_tar(m_dir / "t.tar", m_dir / "dest");
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->files, 2u);
  EXPECT_EQ(stats->directories, 2u);
  EXPECT_EQ(stats->symlinks, 2u);
  EXPECT_EQ(stats->hardlinks, 1u);
  EXPECT_EQ(stats->bytes, 10u);
  EXPECT_EQ(read_file(m_dir / "dest/out/k"), "kernel");
  EXPECT_EQ(read_file(m_dir / "dest/out/link"), "deep");
  EXPECT_EQ(fs::read_symlink(m_dir / "dest/out/up"), "../out/k");
  EXPECT_EQ(fs::hard_link_count(m_dir / "dest/out/k"), 2u);
}

TEST_F(Extract, RefusesAbsolutePaths) {
  EXPECT_EQ(refusal({{.path = "ok", .data = "x"}, {.path = "/etc/cron.d/evil", .data = "x"}}),
            "refusing archive: entry '/etc/cron.d/evil' has an absolute path");
}

TEST_F(Extract, RefusesDotDot) {
  EXPECT_EQ(refusal({{.path = "out/../../evil", .data = "x"}}),
            "refusing archive: entry 'out/../../evil' has a '..' component");
  // Even one that would stay inside: no archive from a build needs it.
  EXPECT_EQ(refusal({{.path = "a/../b", .data = "x"}}), "refusing archive: entry 'a/../b' has a '..' component");
}

TEST_F(Extract, RefusesSymlinksThatLeave) {
  EXPECT_EQ(refusal({{.path = "out/etc", .type = AE_IFLNK, .link = "/etc"}}),
            "refusing archive: entry 'out/etc' is a symlink to an absolute path ('/etc')");
  EXPECT_EQ(refusal({{.path = "out/up", .type = AE_IFLNK, .link = "../../.."}}),
            "refusing archive: entry 'out/up' is a symlink ('../../..') that resolves outside the destination");
}

// Each link alone stays inside; followed through each other they leave:
// "s" is the root, so "s/.." is the root's parent. The shared rules refuse
// any '..' after a name, so "x" is refused for that, at its own header.
TEST_F(Extract, RefusesLinkChainsThatLeave) {
  EXPECT_EQ(refusal({{.path = "s", .type = AE_IFLNK, .link = "."}, {.path = "x", .type = AE_IFLNK, .link = "s/.."}}),
            "refusing archive: entry 'x' is a symlink ('s/..') with a '..' after a name (only leading '..' are "
            "accepted: the name may be a link)");
  EXPECT_EQ(refusal({{.path = "a", .type = AE_IFLNK, .link = "b"}, {.path = "b", .type = AE_IFLNK, .link = "a"}}),
            "refusing archive: entry 'a' is a symlink ('b') in a loop");
}

TEST_F(Extract, RefusesWritingThroughALink) {
  EXPECT_EQ(refusal({{.path = "out", .type = AE_IFLNK, .link = "real"},
                     {.path = "real/", .type = AE_IFDIR},
                     {.path = "out/f", .data = "through the link"}}),
            "refusing archive: entry 'out/f' lies below the archive's symlink 'out'");
}

TEST_F(Extract, RefusesHardLinksToAnythingButEarlierFiles) {
  EXPECT_EQ(refusal({{.path = "h", .hardlink = "/etc/shadow"}}),
            "refusing archive: entry 'h' is a hard link whose target has an absolute path");
  EXPECT_EQ(refusal({{.path = "h", .hardlink = "../outside"}}),
            "refusing archive: entry 'h' is a hard link whose target has a '..' component");
  EXPECT_EQ(refusal({{.path = "h", .hardlink = "later"}, {.path = "later", .data = "x"}}),
            "refusing archive: entry 'h' is a hard link to 'later', not an earlier regular file");
  EXPECT_EQ(
      refusal(
          {{.path = "l", .type = AE_IFLNK, .link = "f"}, {.path = "f", .data = "x"}, {.path = "h", .hardlink = "l"}}),
      "refusing archive: entry 'h' is a hard link to 'l', not an earlier regular file");
}

TEST_F(Extract, RefusesDevicesFifosAndRepeats) {
  EXPECT_EQ(refusal({{.path = "null", .type = AE_IFCHR}}), "refusing archive: entry 'null' is a device file");
  EXPECT_EQ(refusal({{.path = "disk", .type = AE_IFBLK}}), "refusing archive: entry 'disk' is a device file");
  EXPECT_EQ(refusal({{.path = "pipe", .type = AE_IFIFO}}), "refusing archive: entry 'pipe' is a FIFO or socket");
  EXPECT_EQ(refusal({{.path = "f", .data = "1"}, {.path = "f", .type = AE_IFLNK, .link = "elsewhere"}}),
            "refusing archive: entry 'f' repeats an earlier entry's path");
}

TEST_F(Extract, DoesNotWriteThroughASymlinkAlreadyInTheDestination) {
  fs::create_directories(m_dir / "outside");
  fs::create_directory_symlink(m_dir / "outside", m_dir / "dest/out");
  write_tar(m_dir / "t.tar", {{.path = "out/f", .data = "x"}});
  auto stats = extract_tar(m_dir / "t.tar", m_dir / "dest");
  ASSERT_FALSE(stats);
  EXPECT_TRUE(fs::is_empty(m_dir / "outside"));
}

TEST_F(Extract, NotATarIsAProtocolError) {
  std::ofstream(m_dir / "t.tar") << std::string(2048, 'z');
  auto stats = extract_tar(m_dir / "t.tar", m_dir / "dest");
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().kind, ErrorKind::protocol);
}

// Entries the engine's own checks accepted and the cache's unpacker
// refused: the rules are shared now (orchestrator/tarsafe/rules.hpp), and
// each is refused before anything is written.
TEST_F(Extract, RefusesWhatTheUnpackerRefused) {
  // A directory's name then '..': accepted before, as "d/p" is a directory.
  EXPECT_EQ(refusal({{.path = "d/p/", .type = AE_IFDIR}, {.path = "q", .type = AE_IFLNK, .link = "d/p/.."}}),
            "refusing archive: entry 'q' is a symlink ('d/p/..') with a '..' after a name (only leading '..' are "
            "accepted: the name may be a link)");
  // Below a file, and a file where a directory was made: before, both passed
  // the checks and failed half-way through the writing, "ok" already out.
  EXPECT_EQ(refusal({{.path = "ok", .data = "1"}, {.path = "f", .data = "x"}, {.path = "f/g", .data = "y"}}),
            "refusing archive: entry 'f/g' lies below 'f', which is not a directory");
  EXPECT_EQ(refusal({{.path = "ok", .data = "1"}, {.path = "a/x", .data = "x"}, {.path = "a", .data = "y"}}),
            "refusing archive: entry 'a' repeats an earlier entry's path");
  EXPECT_EQ(refusal({{.path = "ok", .data = "1"}, {.path = "d/" + std::string(256, 'n'), .data = "x"}}),
            "refusing archive: entry 'd/" + std::string(256, 'n') + "' has a name component over 255 bytes");
}

// Modes are the rules': never setuid, setgid or sticky (libarchive restored
// them where the owner matched, as it does for root), and a directory is
// never writable by others.
TEST_F(Extract, ModesLoseSetuidAndOthersWrite) {
  write_tar(m_dir / "t.tar", {{.path = "./", .type = AE_IFDIR, .perm = 0777},
                              {.path = "out/", .type = AE_IFDIR, .perm = 01777},
                              {.path = "out/tool", .data = "x", .perm = 06755},
                              {.path = "out/plain", .data = "x", .perm = 0640}});
  auto stats = extract_tar(m_dir / "t.tar", m_dir / "dest");
  ASSERT_TRUE(stats) << stats.error().message;
  const auto mode = [&](const char* rel) { return fs::status(m_dir / "dest" / rel).permissions(); };
  EXPECT_EQ(mode("out"), static_cast<fs::perms>(0755));
  EXPECT_EQ(mode("out/tool"), static_cast<fs::perms>(0755));
  EXPECT_EQ(mode("out/plain"), static_cast<fs::perms>(0640));
  EXPECT_EQ(stats->directories, 1u) << "the root entry makes nothing";
}

TEST_F(Extract, ContextTarRoundTrips) {
  fs::create_directories(m_dir / "ctx/sub");
  std::ofstream(m_dir / "ctx/Dockerfile") << "FROM x\n";
  std::ofstream(m_dir / "ctx/sub/file") << "data";
  fs::create_symlink("sub/file", m_dir / "ctx/link");
  auto count = write_context_tar(m_dir / "ctx", m_dir / "ctx.tar");
  ASSERT_TRUE(count) << count.error().message;
  EXPECT_EQ(*count, 4u);
  auto stats = extract_tar(m_dir / "ctx.tar", m_dir / "dest");
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(read_file(m_dir / "dest/Dockerfile"), "FROM x\n");
  EXPECT_EQ(read_file(m_dir / "dest/sub/file"), "data");
  EXPECT_EQ(fs::read_symlink(m_dir / "dest/link"), "sub/file");
}

TEST_F(Extract, ContextWithASocketIsRefused) {
  fs::create_directories(m_dir / "ctx");
  ASSERT_EQ(::mkfifo((m_dir / "ctx/fifo").c_str(), 0600), 0);
  auto count = write_context_tar(m_dir / "ctx", m_dir / "ctx.tar");
  ASSERT_FALSE(count);
  EXPECT_EQ(count.error().kind, ErrorKind::invalid_spec);
}

}  // namespace
}  // namespace orc::engine
