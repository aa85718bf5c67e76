#include "orchestrator/registry/retry.hpp"

#include <ctime>
#include <string>

namespace orc::registry {

bool is_retryable_status(int status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789") == std::string_view::npos) {
    // Bound the digits so a hostile value cannot overflow.
    if (value.size() > 9) return std::chrono::hours(24);
    return std::chrono::seconds(std::stol(std::string(value)));
  }
  // IMF-fixdate, the only HTTP-date form servers send today.
  std::tm tm{};
  const std::string text(value);
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0') return std::nullopt;
  const auto when = std::chrono::system_clock::from_time_t(timegm(&tm));
  if (when <= now) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(when - now);
}

std::optional<std::chrono::milliseconds> retry_delay(const RetryPolicy& policy, int failed_attempt,
                                                     std::optional<std::chrono::milliseconds> retry_after) {
  if (failed_attempt >= policy.max_attempts) return std::nullopt;
  if (retry_after) return std::min(*retry_after, policy.max_delay);
  auto delay = policy.base_delay;
  for (int i = 1; i < failed_attempt && delay < policy.max_delay; ++i) delay *= 2;
  return std::min(delay, policy.max_delay);
}

}  // namespace orc::registry
