// Issue 11: a file truncated while inspect read it killed the process with
// SIGBUS. Reads under a ReadGuard survive it and the file says it changed;
// the same read without a guard is shown to die, so the setup is real.
#include "orchestrator/inspect/mapped_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace orc::inspect {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_size = 256 * 1024;

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-mapped-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  fs::path write(const std::string& name, std::size_t size = k_size) {
    const fs::path p = m_dir / name;
    std::ofstream(p, std::ios::binary) << std::string(size, 'x');
    return p;
  }

  fs::path m_dir;
};

// Every byte, read the way a parser reads: the sum keeps the loads.
std::uint64_t read_every_byte(Bytes bytes) {
  std::uint64_t sum = 0;
  for (const std::byte b : bytes) sum += static_cast<std::uint8_t>(b);
  return sum;
}

// How a SIGBUS nobody survives ends the process: by the signal, or, in a
// sanitizer build, by AddressSanitizer's handler (the one installed before
// ours, which ours passes it to) reporting it and exiting 1.
#if defined(__SANITIZE_ADDRESS__)
const auto k_died_of_sigbus = ::testing::ExitedWithCode(1);
constexpr const char* k_sigbus_message = "AddressSanitizer: BUS";
#else
const auto k_died_of_sigbus = ::testing::KilledBySignal(SIGBUS);
constexpr const char* k_sigbus_message = "";
#endif

MappedFile open_or_fail(const fs::path& p) {
  auto file = MappedFile::open(p);
  if (!file) ADD_FAILURE() << p << ": " << file.error();
  return file ? std::move(*file) : MappedFile();
}

TEST_F(MappedFileTest, AFileThatHeldStillHasNotChanged) {
  MappedFile file = open_or_fail(write("still"));
  {
    const ReadGuard guard(file);
    EXPECT_EQ(read_every_byte(file.bytes()), k_size * 'x');
  }
  EXPECT_EQ(file.changed(), std::nullopt);
}

TEST_F(MappedFileTest, TruncatedUnderAGuardedReadIsReportedNotASignal) {
  const fs::path p = write("cut");
  MappedFile file = open_or_fail(p);
  fs::resize_file(p, 100);
  std::uint64_t sum = 0;
  {
    const ReadGuard guard(file);
    sum = read_every_byte(file.bytes());
  }
  // The 100 bytes that stayed, then zeros where the pages past them were.
  EXPECT_EQ(sum, 100u * 'x');
  EXPECT_EQ(file.changed(), "changed while being read (truncated to 100 bytes, from 262144 bytes when opened)");
}

TEST_F(MappedFileTest, WithoutAGuardTheSameReadDiesOfSigbus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const fs::path p = write("cut");
  EXPECT_EXIT(
      {
        MappedFile file = open_or_fail(p);
        fs::resize_file(p, 100);
        std::_Exit(static_cast<int>(read_every_byte(file.bytes()) % 7));
      },
      k_died_of_sigbus, k_sigbus_message);
}

// A SIGBUS that no guarded read caused (here one sent by a process) is
// not swallowed: it ends the process as it would have.
TEST_F(MappedFileTest, ASigbusNotFromAGuardedReadStillKills) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const fs::path p = write("any");
  EXPECT_EXIT(
      {
        MappedFile file = open_or_fail(p);
        const ReadGuard guard(file);
        ::raise(SIGBUS);
        std::_Exit(0);
      },
      k_died_of_sigbus, k_sigbus_message);
}

// inspect hashes and parses on several threads at once: each thread's
// guards are its own, and each file is marked by whichever thread hit it.
TEST_F(MappedFileTest, ParallelReadersOfTruncatedFilesAllSurvive) {
  constexpr int k_files = 4;
  std::vector<fs::path> paths;
  std::vector<MappedFile> files;
  for (int i = 0; i < k_files; ++i) {
    paths.push_back(write("cut" + std::to_string(i)));
    files.push_back(open_or_fail(paths.back()));
    fs::resize_file(paths.back(), 4096 * static_cast<std::size_t>(i));
  }
  std::vector<std::uint64_t> sums(2 * k_files);
  {
    std::vector<std::jthread> readers;
    for (int t = 0; t < 2 * k_files; ++t)
      readers.emplace_back([&, t] {
        MappedFile& file = files[t % k_files];
        const ReadGuard guard(file);
        sums[t] = read_every_byte(file.bytes());
      });
  }
  for (int t = 0; t < 2 * k_files; ++t) EXPECT_EQ(sums[t], 4096u * (t % k_files) * 'x') << t;
  for (int i = 0; i < k_files; ++i)
    EXPECT_EQ(files[i].changed(), "changed while being read (truncated to " + std::to_string(4096 * i) +
                                      " bytes, from 262144 bytes when opened)");
}

TEST_F(MappedFileTest, GuardsNestAndEachCoversItsOwnFile) {
  const fs::path outer_path = write("outer"), inner_path = write("inner");
  MappedFile outer = open_or_fail(outer_path), inner = open_or_fail(inner_path);
  fs::resize_file(outer_path, 0);
  {
    const ReadGuard a(outer);
    {
      const ReadGuard b(inner);
      EXPECT_EQ(read_every_byte(outer.bytes()), 0u);  // the outer guard still holds
    }
  }
  EXPECT_NE(outer.changed(), std::nullopt);
  EXPECT_EQ(inner.changed(), std::nullopt);
}

TEST_F(MappedFileTest, AFileGrownOrRewrittenInPlaceHasChanged) {
  const fs::path grown = write("grown");
  MappedFile file = open_or_fail(grown);
  std::ofstream(grown, std::ios::binary | std::ios::app) << "more";
  EXPECT_EQ(file.changed(), "changed while being read (now 262148 bytes, 262144 bytes when opened)");

  const fs::path rewritten = write("rewritten");
  MappedFile same_size = open_or_fail(rewritten);
  const timespec earlier[2] = {{.tv_sec = 1'000'000'000, .tv_nsec = 0}, {.tv_sec = 1'000'000'000, .tv_nsec = 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, rewritten.c_str(), earlier, 0), 0);
  EXPECT_EQ(same_size.changed(), "changed while being read (modified in place)");
}

// A file replaced by a rename leaves the mapped one whole: nothing changed
// under the reader.
TEST_F(MappedFileTest, AFileReplacedByARenameHasNotChanged) {
  const fs::path p = write("replaced");
  MappedFile file = open_or_fail(p);
  const fs::path other = write("new", 10);
  fs::rename(other, p);
  {
    const ReadGuard guard(file);
    EXPECT_EQ(read_every_byte(file.bytes()), k_size * 'x');
  }
  EXPECT_EQ(file.changed(), std::nullopt);
}

}  // namespace
}  // namespace orc::inspect
