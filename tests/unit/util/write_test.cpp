// util/write: the one loop that writes a whole buffer, in pieces of at most
// k_write_piece bytes (why: util/write.hpp; how fast: bench/fetch.sh).
#include "orchestrator/util/write.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/util/fd.hpp"
#include "orchestrator/util/fs.hpp"

namespace orc::util {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> pattern(std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 131 + i / 4093) & 0xff);
  return bytes;
}

std::string as_text(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

class Write : public ::testing::Test {
 protected:
  void SetUp() override {
    m_path = fs::temp_directory_path() / ("orc-write-test-" + std::to_string(::getpid()));
    m_fd.reset(::open(m_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    ASSERT_GE(m_fd.get(), 0);
  }
  void TearDown() override { fs::remove(m_path); }
  std::string contents() const { return read_file(m_path, 64 << 20).value(); }
  fs::path m_path;
  Fd m_fd;
};

TEST_F(Write, WritesEveryByteAtEachSizeAroundThePiece) {
  std::string expected;
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, k_write_piece - 1, k_write_piece, k_write_piece + 1,
                                 3 * k_write_piece + 7, std::size_t{5} << 20}) {
    const auto bytes = pattern(size);
    ASSERT_TRUE(write_all(m_fd.get(), bytes)) << size;
    expected += as_text(bytes);
  }
  EXPECT_EQ(contents(), expected);
}

TEST_F(Write, TakesTextToo) {
  ASSERT_TRUE(write_all(m_fd.get(), std::string_view("a line\n")));
  EXPECT_EQ(contents(), "a line\n");
}

TEST_F(Write, PwriteWritesAtTheOffsetAndLeavesTheFileOffsetAlone) {
  const auto bytes = pattern(2 * k_write_piece + 3);
  ASSERT_TRUE(write_all(m_fd.get(), std::string_view("head")));
  ASSERT_TRUE(pwrite_all(m_fd.get(), bytes, 100));
  EXPECT_EQ(::lseek(m_fd.get(), 0, SEEK_CUR), 4) << "pwrite must not move the offset";
  const std::string text = contents();
  ASSERT_EQ(text.size(), 100 + bytes.size());
  EXPECT_EQ(text.substr(0, 4), "head");
  EXPECT_EQ(text.substr(4, 96), std::string(96, '\0')) << "the gap reads as zeros";
  EXPECT_EQ(text.substr(100), as_text(bytes));
}

TEST(WriteErrors, SaysWhyWithErrno) {
  const auto bytes = pattern(10);
  errno = 0;
  EXPECT_FALSE(write_all(-1, bytes));
  EXPECT_EQ(errno, EBADF);
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  Fd reader(fds[0]), writer(fds[1]);
  reader.close();
  ::signal(SIGPIPE, SIG_IGN);
  errno = 0;
  EXPECT_FALSE(write_all(writer.get(), bytes));
  EXPECT_EQ(errno, EPIPE);
}

// A pipe takes at most its capacity per call: the loop continues after each
// short write until every byte is through, in order.
TEST(WriteShort, ContinuesAfterShortWrites) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  Fd reader(fds[0]), writer(fds[1]);
  ::fcntl(writer.get(), F_SETPIPE_SZ, 4096);
  const auto bytes = pattern(3 * k_write_piece + 11);
  std::string got;
  std::thread drain([&] {
    char buffer[1000];
    for (ssize_t n; (n = ::read(reader.get(), buffer, sizeof buffer)) > 0;)
      got.append(buffer, static_cast<std::size_t>(n));
  });
  EXPECT_TRUE(write_all(writer.get(), bytes));
  writer.close();
  drain.join();
  EXPECT_EQ(got, as_text(bytes));
}

}  // namespace
}  // namespace orc::util
