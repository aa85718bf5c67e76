// util/fs: reading with a cap (regular files only, never blocking) and the
// atomic write that leaves nothing half-written.
#include "orchestrator/util/fs.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace orc::util {
namespace {

namespace fs = std::filesystem;

class Fs : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-fs-test-" + std::to_string(::getpid()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(m_dir), fs::directory_iterator()));
  }
  fs::path m_dir;
};

TEST_F(Fs, ReadsAWholeFile) {
  ASSERT_TRUE(write_file_atomic(m_dir / "a", std::string("bytes\0with a NUL", 16)));
  EXPECT_EQ(read_file(m_dir / "a").value(), std::string("bytes\0with a NUL", 16));
  EXPECT_EQ(read_file(m_dir / "a", 16).value().size(), 16u) << "the cap itself is allowed";
}

TEST_F(Fs, RefusesMoreThanTheCap) {
  ASSERT_TRUE(write_file_atomic(m_dir / "big", std::string(2 << 20, 'x')));
  const auto big = read_file(m_dir / "big", 1 << 20);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().kind, FsErrorKind::too_large);
  EXPECT_EQ(big.error().message, (m_dir / "big").string() + ": larger than 1 MiB");
  EXPECT_EQ(big.error().size, 2u << 20);
  // /proc files say size 0: the cap holds while reading.
  const auto proc = read_file("/proc/self/maps", 10);
  ASSERT_FALSE(proc);
  EXPECT_EQ(proc.error().kind, FsErrorKind::too_large);
}

TEST_F(Fs, RefusesWhatIsNotARegularFileWithoutBlocking) {
  ASSERT_EQ(::mkfifo((m_dir / "fifo").c_str(), 0600), 0);
  const auto fifo = read_file(m_dir / "fifo");
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().kind, FsErrorKind::not_regular);
  EXPECT_EQ(fifo.error().message, (m_dir / "fifo").string() + ": not a regular file");
  EXPECT_EQ(read_file("/dev/zero").error().kind, FsErrorKind::not_regular);
  EXPECT_EQ(read_file(m_dir).error().kind, FsErrorKind::directory);
  const auto missing = read_file(m_dir / "missing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, FsErrorKind::not_found);
  EXPECT_EQ(missing.error().message, (m_dir / "missing").string() + ": No such file or directory");
}

TEST_F(Fs, WritesAtomicallyWithTheModeAndReplaces) {
  const fs::path target = m_dir / "sub" / "record.json";
  ASSERT_TRUE(write_file_atomic(target, "one", {.mode = 0600}));
  EXPECT_EQ((fs::status(target).permissions() & fs::perms::all), fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(write_file_atomic(target, "two"));
  EXPECT_EQ(read_file(target).value(), "two");
  const auto refused = write_file_atomic(target, "three", {.replace = Replace::refuse});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, FsErrorKind::exists);
  EXPECT_EQ(read_file(target).value(), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(target.parent_path()), fs::directory_iterator()), 1)
      << "no temporary is left behind";
}

TEST_F(Fs, LeavesNothingHalfWrittenWhenTheWriteFails) {
  ASSERT_TRUE(write_file_atomic(m_dir / "kept", "old"));
  // The temporary's directory is a file: creating it fails.
  ASSERT_TRUE(write_file_atomic(m_dir / "not-a-dir", "x"));
  const auto failed = write_file_atomic(m_dir / "kept", "new", {.tmp_dir = m_dir / "not-a-dir"});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().kind, FsErrorKind::io);
  EXPECT_EQ(read_file(m_dir / "kept").value(), "old");
  // Renaming over a directory fails after the bytes are written: the
  // temporary goes, the directory stays.
  fs::create_directories(m_dir / "a-dir" / "inside");
  const auto over_dir = write_file_atomic(m_dir / "a-dir", "bytes");
  ASSERT_FALSE(over_dir);
  EXPECT_TRUE(fs::is_directory(m_dir / "a-dir"));
  EXPECT_EQ(entries(), 3u) << "kept, not-a-dir, a-dir and no temporary";
}

TEST_F(Fs, CommitsWithoutReplacing) {
  ASSERT_TRUE(write_file_atomic(m_dir / "t1", "first"));
  EXPECT_TRUE(commit_no_replace(m_dir / "t1", m_dir / "target").value());
  ASSERT_TRUE(write_file_atomic(m_dir / "t2", "second"));
  EXPECT_FALSE(commit_no_replace(m_dir / "t2", m_dir / "target").value());
  EXPECT_EQ(read_file(m_dir / "target").value(), "first");
  EXPECT_FALSE(fs::exists(m_dir / "t2"));
  EXPECT_TRUE(temp_name(m_dir, "x").string().ends_with(".tmp"));
  EXPECT_NE(temp_name(m_dir, "x"), temp_name(m_dir, "x"));
}

}  // namespace
}  // namespace orc::util
