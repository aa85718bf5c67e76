// read_small_file: what a key path a user names may be (issue 11: `key trust
// /dev/zero` read 3 GB in 12 s, and a FIFO blocked forever).
#include "orchestrator/cache/files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "orchestrator/cache/keys.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;

class SmallFile : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-small-file-" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path m_dir;
};

TEST_F(SmallFile, ARegularFileWithinTheLimitIsRead) {
  std::ofstream(m_dir / "k.pem") << "0123456789";
  EXPECT_EQ(read_small_file(m_dir / "k.pem", 10, "a key").value(), "0123456789");
}

TEST_F(SmallFile, DevicesFifosAndLargeFilesAreRefusedAtOnce) {
  const auto zero = read_small_file("/dev/zero", 1024, "a public key PEM file");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "/dev/zero is not a regular file; give a public key PEM file");
  ASSERT_EQ(::mkfifo((m_dir / "fifo").c_str(), 0600), 0);
  const auto fifo = read_key_file(m_dir / "fifo");  // would block without O_NONBLOCK
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("is not a regular file"), std::string::npos);
  std::ofstream(m_dir / "big.pem") << std::string(11, 'x');
  const auto big = read_small_file(m_dir / "big.pem", 10, "a key");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message, (m_dir / "big.pem").string() + " is 11 bytes, more than a key holds (at most 10)");
  const auto missing = read_key_file(m_dir / "none.pem");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
}

}  // namespace
}  // namespace orc::cache
