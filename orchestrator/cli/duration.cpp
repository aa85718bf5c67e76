#include "orchestrator/cli/duration.hpp"

#include <charconv>

namespace orc::cli {

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
  long long n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || n <= 0 || end == text.data()) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  long long scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1;
  else if (unit == "m")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  else if (unit == "d")
    scale = 86400;
  if (scale == 0 || n > 365LL * 86400 / scale) return std::nullopt;
  return std::chrono::seconds(n * scale);
}

}  // namespace orc::cli
