// The durations watch --interval and schedule --interval take.
#include "orchestrator/cli/duration.hpp"

#include <gtest/gtest.h>

namespace orc::cli {
namespace {

using std::chrono::seconds;

TEST(Duration, UnitsAndBareSeconds) {
  EXPECT_EQ(parse_duration("30s"), seconds(30));
  EXPECT_EQ(parse_duration("45"), seconds(45));
  EXPECT_EQ(parse_duration("15m"), seconds(900));
  EXPECT_EQ(parse_duration("6h"), seconds(21600));
  EXPECT_EQ(parse_duration("1d"), seconds(86400));
  EXPECT_EQ(parse_duration("365d"), seconds(365 * 86400));
}

TEST(Duration, NothingElse) {
  for (const char* bad : {"", "0", "0h", "-1h", "6x", "6hours", "h", "1.5h", " 6h", "366d", "99999999999999999999s"})
    EXPECT_FALSE(parse_duration(bad)) << bad;
}

}  // namespace
}  // namespace orc::cli
