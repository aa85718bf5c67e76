#include "orchestrator/util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>

namespace orc::util {

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_any(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto end = s.find_first_of(separators, start);
    const auto piece = s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!piece.empty()) out.emplace_back(piece);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> out;
  while (true) {
    const auto start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) return out;
    text.remove_prefix(start);
    const auto end = std::min(text.find(' '), text.size());
    out.push_back(text.substr(0, end));
    text.remove_prefix(end);
  }
}

std::string join(std::span<const std::string> parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && to_lower(s.substr(0, prefix.size())) == to_lower(prefix);
}

std::string human_size(std::uint64_t bytes) {
  static constexpr const char* k_units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(k_units)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, k_units[unit]);
  return text;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

namespace {

template <typename Range>
std::string closest(std::string_view word, const Range& candidates) {
  const std::string lowered = to_lower(word);
  const std::size_t limit = std::max<std::size_t>(1, (word.size() + 2) / 3);
  std::size_t best = std::numeric_limits<std::size_t>::max();
  std::string best_name;
  for (const auto& c : candidates) {
    const std::size_t dist = edit_distance(lowered, to_lower(c));
    if (dist < best) {
      best = dist;
      best_name = std::string(c);
    }
  }
  return best <= limit ? best_name : std::string{};
}

}  // namespace

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  return closest(word, candidates);
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  return closest(word, candidates);
}

std::map<std::string, std::string> key_value_words(std::string_view line) {
  std::map<std::string, std::string> out;
  std::string last;
  for (const auto word : split_words(line)) {
    const auto eq = word.find('=');
    const bool key = eq != std::string_view::npos && eq > 0 && std::isupper(static_cast<unsigned char>(word.front())) &&
                     std::ranges::all_of(word.substr(0, eq), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
                     });
    if (key) {
      last = std::string(word.substr(0, eq));
      out[last] = std::string(word.substr(eq + 1));
    } else if (!last.empty()) {
      out[last] += " " + std::string(word);
    }
  }
  return out;
}

}  // namespace orc::util
