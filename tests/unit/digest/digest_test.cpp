// The Digest value: its one text form, the errors for every other, and the
// comparisons and hash that let it key a map.
#include "orchestrator/digest/digest.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <unordered_set>

namespace orc::digest {
namespace {

const std::string k_empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TEST(Digest, ParsesAndPrintsTheOneForm) {
  const auto d = Digest::parse("sha256:" + k_empty);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->algorithm(), Algorithm::sha256);
  EXPECT_EQ(d->hex(), k_empty);
  EXPECT_EQ(d->to_string(), "sha256:" + k_empty);
  EXPECT_EQ(d->bytes()[0], std::byte{0xe3});
  EXPECT_EQ(d->bytes()[31], std::byte{0x55});
  EXPECT_EQ(Digest::parse(d->to_string()).value(), *d);
  EXPECT_EQ(Digest::from_hex(k_empty).value(), *d);
  EXPECT_EQ(to_string(Algorithm::sha256), "sha256");
}

TEST(Digest, ErrorsSayWhatIsWrong) {
  EXPECT_EQ(Digest::parse(k_empty).error(),
            "not a digest: '" + k_empty + "' (expected sha256:<64 lowercase hex digits>)");
  EXPECT_EQ(Digest::parse("sha512:" + k_empty).error(),
            "digest 'sha512:" + k_empty + "' uses algorithm 'sha512'; only sha256 is supported");
  EXPECT_EQ(Digest::parse("sha256:abc").error(), "digest 'sha256:abc' has 3 hex digits; sha256 needs 64");
  EXPECT_EQ(Digest::parse("sha256:").error(), "digest 'sha256:' has 0 hex digits; sha256 needs 64");
  std::string upper = "sha256:" + k_empty;
  upper[7 + 4] = 'C';
  EXPECT_EQ(Digest::parse(upper).error(), "digest '" + upper +
                                              "' has an uppercase hex digit at position 5 of its 64 (digests are "
                                              "lowercase hex)");
  std::string bad = k_empty;
  bad[63] = 'g';
  EXPECT_EQ(Digest::from_hex(bad).error(), "digest '" + bad +
                                               "' has a character that is not a hex digit at position 64 of its 64 "
                                               "(digests are lowercase hex)");
  // A hostile input is quoted in part only.
  const std::string huge = "sha256:" + std::string(1000, 'a');
  EXPECT_EQ(Digest::parse(huge).error(), "digest '" + huge.substr(0, 80) + "...' has 1000 hex digits; sha256 needs 64");
  EXPECT_FALSE(Digest::parse("sha256:../../etc/passwd"));
}

TEST(Digest, OrdersAndHashesForMaps) {
  const Digest a = Digest::from_hex(std::string(63, '0') + "1").value();
  const Digest b = Digest::from_hex(std::string(63, '0') + "2").value();
  EXPECT_LT(a, b);
  EXPECT_NE(a, b);
  EXPECT_EQ(Digest(), Digest::from_hex(std::string(64, '0')).value());
  const std::map<Digest, int> ordered{{b, 2}, {a, 1}};
  EXPECT_EQ(ordered.begin()->second, 1);
  const std::unordered_set<Digest> set{a, b, a};
  EXPECT_EQ(set.size(), 2u);
}

}  // namespace
}  // namespace orc::digest

namespace orc::digest {
namespace {

// What a user names a digest by: a prefix of 4 to 64 hex digits, "sha256:"
// optional and either case (as the index always took it); a whole digest,
// or one naming another algorithm, is checked as Digest::parse checks it.
TEST(DigestPrefix, TakesPrefixesAndRefusesWhatNamesNoDigest) {
  EXPECT_EQ(DigestPrefix::parse("sha256:abcd1").value().hex(), "abcd1");
  EXPECT_EQ(DigestPrefix::parse("ABCD2").value().hex(), "abcd2");
  EXPECT_EQ(DigestPrefix::parse("abcd").value().to_string(), "sha256:abcd");
  const Digest whole = Digest::from_hex(std::string(63, '0') + "7").value();
  EXPECT_EQ(DigestPrefix::parse(whole.to_string()).value().hex(), whole.hex());
  EXPECT_TRUE(DigestPrefix::parse(whole.hex()).value().matches(whole));
  EXPECT_TRUE(DigestPrefix(whole).matches(whole));
  EXPECT_FALSE(DigestPrefix::parse("0001").value().matches(whole));

  EXPECT_EQ(DigestPrefix::parse("abc").error(),
            "'abc' is not a sha256 digest or a prefix of one (4 to 64 hex digits, sha256: optional)");
  EXPECT_EQ(DigestPrefix::parse("abcz1").error(),
            "'abcz1' is not a sha256 digest or a prefix of one (4 to 64 hex digits, sha256: optional)");
  EXPECT_EQ(DigestPrefix::parse("sha512:abcd").error(),
            "digest 'sha512:abcd' uses algorithm 'sha512'; only sha256 is supported");
  EXPECT_EQ(DigestPrefix::parse(std::string(65, 'a')).error(),
            "digest '" + std::string(65, 'a') + "' has 65 hex digits; sha256 needs 64");
  EXPECT_EQ(DigestPrefix::parse("sha256:" + std::string(63, 'a') + "x").error(),
            "digest 'sha256:" + std::string(63, 'a') +
                "x' has a character that is not a hex digit at position 64 of its 64 (digests are lowercase hex)");
}

TEST(DigestShortString, NamesTheDigestByItsFirstDigits) {
  const Digest d = Digest::from_hex("0123456789abcdef" + std::string(48, '0')).value();
  EXPECT_EQ(d.short_string(16), "sha256:0123456789abcdef");
  EXPECT_EQ(d.short_string(100), d.to_string());
}

}  // namespace
}  // namespace orc::digest
