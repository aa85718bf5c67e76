#include "orchestrator/registry/retry.hpp"

#include <gtest/gtest.h>

namespace orc::registry {
namespace {

using std::chrono::milliseconds;

TEST(Retry, WhichStatusesAreRetried) {
  for (int status : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(is_retryable_status(status)) << status;
  for (int status : {200, 201, 400, 401, 403, 404, 416, 501}) EXPECT_FALSE(is_retryable_status(status)) << status;
}

TEST(Retry, ExponentialBackoffIsBounded) {
  const RetryPolicy policy{.max_attempts = 6, .base_delay = milliseconds(100), .max_delay = milliseconds(1000)};
  EXPECT_EQ(retry_delay(policy, 1), milliseconds(100));
  EXPECT_EQ(retry_delay(policy, 2), milliseconds(200));
  EXPECT_EQ(retry_delay(policy, 3), milliseconds(400));
  EXPECT_EQ(retry_delay(policy, 4), milliseconds(800));
  EXPECT_EQ(retry_delay(policy, 5), milliseconds(1000));
  EXPECT_EQ(retry_delay(policy, 6), std::nullopt);  // six attempts made: no seventh
  EXPECT_EQ(retry_delay(RetryPolicy{.max_attempts = 1}, 1), std::nullopt);
}

TEST(Retry, RetryAfterIsHonouredUpToTheBound) {
  const RetryPolicy policy{.max_attempts = 3, .base_delay = milliseconds(100), .max_delay = milliseconds(5000)};
  EXPECT_EQ(retry_delay(policy, 1, milliseconds(2000)), milliseconds(2000));
  EXPECT_EQ(retry_delay(policy, 1, milliseconds(3'600'000)), milliseconds(5000));
  EXPECT_EQ(retry_delay(policy, 3, milliseconds(10)), std::nullopt);
}

TEST(Retry, RetryAfterForms) {
  const auto now = std::chrono::system_clock::from_time_t(1445412480);  // Wed, 21 Oct 2015 07:28:00 GMT
  EXPECT_EQ(parse_retry_after("120", now), milliseconds(120'000));
  EXPECT_EQ(parse_retry_after(" 0 ", now), milliseconds(0));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now), milliseconds(30'000));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now), milliseconds(0));
  EXPECT_EQ(parse_retry_after("99999999999999999999", now), std::chrono::hours(24));
  EXPECT_EQ(parse_retry_after("soon", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("-5", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("", now), std::nullopt);
}

}  // namespace
}  // namespace orc::registry
