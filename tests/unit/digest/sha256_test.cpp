#include "orchestrator/digest/sha256.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace orc::digest {
namespace {

// FIPS 180-2 test vectors, the empty string among them.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256("").hex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256("abc").hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").hex(),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalEqualsOneShotAndRestartsAfterDigest) {
  const std::string million(1000000, 'a');
  Sha256 h;
  for (std::size_t i = 0; i < million.size(); i += 4093) h.update(std::string_view(million).substr(i, 4093));
  EXPECT_EQ(h.digest().hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // After a digest the hasher starts afresh.
  h.update("abc");
  EXPECT_EQ(h.digest().hex(), sha256("abc").hex());
  // Moved-from-and-into hashers keep working.
  Sha256 moved = std::move(h);
  moved.update("abc");
  EXPECT_EQ(moved.digest().hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// reset() drops what was fed; a file hashes like its bytes, and a missing
// one says which and why.
TEST(Sha256, ResetAndFiles) {
  Sha256 h;
  h.update("discarded");
  h.reset();
  h.update("abc");
  EXPECT_EQ(h.digest(), sha256("abc"));
  const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / "orc-digest-file";
  std::ofstream(file) << std::string(3 << 20, 'x');
  Sha256 from_file;
  const auto size = hash_file(file, from_file);
  ASSERT_TRUE(size) << size.error();
  EXPECT_EQ(*size, 3u << 20);
  EXPECT_EQ(from_file.digest(), sha256(std::string(3 << 20, 'x')));
  std::filesystem::remove(file);
  EXPECT_EQ(hash_file("/nonexistent/f", from_file).error(), "cannot read /nonexistent/f: No such file or directory");
}

}  // namespace
}  // namespace orc::digest
