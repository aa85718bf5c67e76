#pragma once
// When to try a request again and how long to wait first: exponential
// backoff on 429, 5xx and connection failures, bounded in attempts and in
// delay, with the server's Retry-After honoured (but never past the bound: a
// registry must not park a build for an hour). Pure functions, so the
// decisions are unit-tested without a clock.
#include <chrono>
#include <optional>
#include <string_view>

namespace orc::registry {

struct RetryPolicy {
  int max_attempts = 5;  // tries in all, the first included; 1 = never retry
  std::chrono::milliseconds base_delay{250};
  std::chrono::milliseconds max_delay{8'000};
};

// 408, 429, 500, 502, 503, 504: the statuses a later try may not see.
bool is_retryable_status(int status);

// Seconds from a Retry-After value: delta-seconds ("120") or an HTTP-date
// ("Wed, 21 Oct 2015 07:28:00 GMT", compared with `now`). nullopt when it is
// neither; a date in the past is zero.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now);

// The wait before attempt `failed_attempt + 1`, or nullopt when the policy
// allows no more attempts. `retry_after` is the server's wish, if any.
std::optional<std::chrono::milliseconds> retry_delay(const RetryPolicy& policy, int failed_attempt,
                                                     std::optional<std::chrono::milliseconds> retry_after = {});

}  // namespace orc::registry
