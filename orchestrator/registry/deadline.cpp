#include "orchestrator/registry/deadline.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "orchestrator/util/strings.hpp"

namespace orc::registry {

std::chrono::milliseconds deadline_for(const DeadlinePolicy& policy, std::uint64_t bytes) {
  using Rep = std::chrono::milliseconds::rep;
  constexpr auto k_max = static_cast<std::uint64_t>(std::numeric_limits<Rep>::max() / 2);
  const std::uint64_t rate = policy.min_rate == 0 ? 1 : policy.min_rate;
  // Milliseconds of transfer: bytes * 1000 / rate, without overflowing the product.
  const std::uint64_t whole = bytes / rate, rest = bytes % rate;
  std::uint64_t ms = whole > k_max / 1000 ? k_max : whole * 1000 + rest * 1000 / rate;
  const auto base = static_cast<std::uint64_t>(std::max<Rep>(policy.base.count(), 0));
  ms = ms > k_max - base ? k_max : ms + base;
  return std::chrono::milliseconds(static_cast<Rep>(ms));
}

std::string seconds_text(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms % 1000 == 0 || ms >= 10'000) return std::to_string((ms + 500) / 1000) + " s";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms) / 1000.0);
  return text;
}

std::string timed_out_message(const TimedOut& t, const DeadlinePolicy& policy, std::string_view from) {
  const std::string verb = t.direction == Direction::download ? " came" : " went";
  std::string message = t.what + (t.direction == Direction::download ? " from " : " to ") + std::string(from) +
                        " timed out: " + util::human_size(t.moved);
  if (t.size > 0) message += " of " + util::human_size(t.size);
  message += verb + " within its deadline of " + seconds_text(t.budget) + " (";
  if (t.size > 0)
    message += seconds_text(policy.base) + " + " + util::human_size(t.size) + " at " +
               util::human_size(policy.min_rate) + "/s)";
  else
    message += "the budget of a small exchange)";
  return message;
}

}  // namespace orc::registry
