#include <gtest/gtest.h>

#include <string>

#include "orchestrator/digest/sha256.hpp"

namespace orc::digest {
namespace {

TEST(Digest, KnownValuesAndSyntax) {
  EXPECT_EQ(sha256("").to_string(), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256("{}").to_string(), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  EXPECT_TRUE(Digest::parse(sha256("x").to_string()).has_value());
  EXPECT_FALSE(Digest::parse("sha256:" + std::string(64, 'A')).has_value());
  EXPECT_FALSE(Digest::parse("sha512:" + std::string(64, 'a')).has_value());
  EXPECT_FALSE(Digest::parse("sha256:../../etc/passwd").has_value());
  EXPECT_EQ(Digest::parse(sha256("x").to_string()).value(), sha256("x"));
}

// The download hasher runs on its own thread; it must agree with the plain
// one for bytes fed in every pattern of sizes, across its 4 MiB blocks.
TEST(Digest, BackgroundHasherAgreesWithThePlainOne) {
  std::string bytes(9 << 20, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 2654435761u >> 13);
  BackgroundSha256 background;
  for (const std::size_t step : {std::size_t{1}, std::size_t{16384}, std::size_t{3 << 20}, bytes.size()}) {
    for (std::size_t at = 0; at < bytes.size(); at += step) background.update(std::string_view(bytes).substr(at, step));
    EXPECT_EQ(background.digest(), sha256(bytes)) << "step " << step;
  }
  background.update("discarded");
  background.reset();
  background.update("abc");
  EXPECT_EQ(background.digest(), sha256("abc"));
  EXPECT_EQ(background.digest(), sha256(""));
}

}  // namespace
}  // namespace orc::digest
