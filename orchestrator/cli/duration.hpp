#pragma once
// The durations the watcher's options take: "30s", "15m", "6h", "1d", or a
// bare number of seconds; positive, a year at most.
#include <chrono>
#include <optional>
#include <string_view>

namespace orc::cli {

std::optional<std::chrono::seconds> parse_duration(std::string_view text);

}  // namespace orc::cli
