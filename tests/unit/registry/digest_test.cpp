#include "orchestrator/registry/digest.hpp"

#include <gtest/gtest.h>

#include <string>

namespace orc::registry {
namespace {

TEST(Digest, KnownValuesAndSyntax) {
  EXPECT_EQ(sha256_digest(""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_digest("{}"), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  EXPECT_TRUE(is_sha256_digest(sha256_digest("x")));
  EXPECT_FALSE(is_sha256_digest("sha256:" + std::string(64, 'A')));
  EXPECT_FALSE(is_sha256_digest("sha512:" + std::string(64, 'a')));
  EXPECT_FALSE(is_sha256_digest("sha256:../../etc/passwd"));
  EXPECT_EQ(digest_hex("sha256:ab"), "ab");
}

// The download hasher runs on its own thread; it must agree with the plain
// one for bytes fed in every pattern of sizes, across its 4 MiB blocks.
TEST(Digest, BackgroundHasherAgreesWithThePlainOne) {
  std::string bytes(9 << 20, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 2654435761u >> 13);
  BackgroundSha256 background;
  for (const std::size_t step : {std::size_t{1}, std::size_t{16384}, std::size_t{3 << 20}, bytes.size()}) {
    for (std::size_t at = 0; at < bytes.size(); at += step) background.update(std::string_view(bytes).substr(at, step));
    EXPECT_EQ(background.digest(), sha256_digest(bytes)) << "step " << step;
  }
  background.update("discarded");
  background.reset();
  background.update("abc");
  EXPECT_EQ(background.digest(), sha256_digest("abc"));
  EXPECT_EQ(background.digest(), sha256_digest(""));
}

}  // namespace
}  // namespace orc::registry
