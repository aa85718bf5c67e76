#include "orchestrator/util/version.hpp"

#include <gtest/gtest.h>

namespace orc::util {
namespace {

Version v(std::string_view s) { return Version::parse(s).value(); }
VersionRange r(std::string_view s) { return VersionRange::parse(s).value(); }

TEST(Version, ParsesAndComparesNumerically) {
  EXPECT_EQ(v("12.4").str(), "12.4");
  EXPECT_EQ(v("9.1.0.70").size(), 4u);
  EXPECT_LT(v("9.2"), v("10.0"));
  EXPECT_LT(v("12.9"), v("12.10"));
  EXPECT_EQ(v("12.4"), v("12.4.0"));
  EXPECT_FALSE(Version::parse("").has_value());
  EXPECT_FALSE(Version::parse("12.x").has_value());
  EXPECT_FALSE(Version::parse("1.2.3.4.5").has_value());
  EXPECT_FALSE(Version::parse("-1").has_value());
}

TEST(VersionRange, BareVersionIsAPrefix) {
  EXPECT_TRUE(r("12.4").contains(v("12.4.1")));
  EXPECT_FALSE(r("12.4").contains(v("12.5")));
  EXPECT_TRUE(r("12").contains(v("12.9")));
  EXPECT_FALSE(r("12").contains(v("13.0")));
}

TEST(VersionRange, Comparators) {
  EXPECT_TRUE(r(">=12.1").contains(v("12.1")));
  EXPECT_FALSE(r(">=12.1").contains(v("12.0")));
  EXPECT_TRUE(r(">=12.1,<13").contains(v("12.9")));
  EXPECT_FALSE(r(">=12.1,<13").contains(v("13.0")));
  EXPECT_TRUE(r("<=12.4").contains(v("12.4.1")));  // as users mean it: any 12.4.x
  EXPECT_FALSE(r("<=12.4").contains(v("12.5")));
  EXPECT_FALSE(r(">12").contains(v("12.9")));
  EXPECT_TRUE(r(">12").contains(v("13.0")));
  EXPECT_TRUE(r("").any());
  EXPECT_TRUE(r("*").contains(v("1.0")));
  EXPECT_TRUE(r(">= 12.1, < 13").contains(v("12.2")));
}

TEST(VersionRange, DetectsImpossibleRanges) {
  EXPECT_FALSE(r(">=13,<12").satisfiable());
  EXPECT_FALSE(r(">=12.4,<12.4").satisfiable());
  EXPECT_TRUE(r(">=12.4,<=12.4").satisfiable());
  EXPECT_TRUE(r(">=11.8,<12").satisfiable());
}

TEST(VersionRange, RejectsBadText) {
  EXPECT_FALSE(VersionRange::parse(">=abc").has_value());
  EXPECT_FALSE(VersionRange::parse("!=12").has_value());
  EXPECT_NE(VersionRange::parse(">=1x").error().find("not a version"), std::string::npos);
}

}  // namespace
}  // namespace orc::util
