#include "orchestrator/inventory/hostlist.hpp"

#include <charconv>

namespace orc::inventory::detail {

namespace {

constexpr std::size_t k_max_digits = 9;  // fits an unsigned

std::expected<unsigned, std::string> number(std::string_view digits) {
  unsigned value = 0;
  if (digits.empty() || digits.size() > k_max_digits)
    return std::unexpected("'" + std::string(digits) + "' is no number of at most 9 digits");
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size())
    return std::unexpected("'" + std::string(digits) + "' is no number");
  return value;
}

// The names a list's top-level commas separate; commas inside [] belong to ranges.
std::expected<std::vector<std::string_view>, std::string> top_level(std::string_view text) {
  std::vector<std::string_view> out;
  bool inside = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') {
      if (inside) return std::unexpected(std::string("a '[' inside brackets"));
      inside = true;
    } else if (text[i] == ']') {
      if (!inside) return std::unexpected(std::string("a ']' without its '['"));
      inside = false;
    } else if (text[i] == ',' && !inside) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (inside) return std::unexpected(std::string("a '[' without its ']'"));
  out.push_back(text.substr(start));
  return out;
}

}  // namespace

std::expected<Hostlist, std::string> Hostlist::parse(std::string_view text) {
  Hostlist out;
  auto names = top_level(text);
  if (!names) return std::unexpected(names.error());
  for (const std::string_view name : *names) {
    if (name.empty()) return std::unexpected(std::string("an empty name"));
    Pattern pattern;
    std::size_t count = 1;
    for (std::size_t i = 0; i < name.size();) {
      if (name[i] != '[') {
        const std::size_t end = std::min(name.find('[', i), name.size());
        const std::string_view literal = name.substr(i, end - i);
        if (literal.find_first_of(" \t\r\n") != std::string_view::npos)
          return std::unexpected(std::string("a name with white space"));
        pattern.push_back(Piece{.text = std::string(literal), .ranges = {}});
        i = end;
        continue;
      }
      const std::size_t close = name.find(']', i);
      Piece piece;
      std::size_t numbers = 0;
      for (std::string_view range = name.substr(i + 1, close - i - 1); !range.empty();) {
        const std::size_t comma = std::min(range.find(','), range.size());
        const std::string_view item = range.substr(0, comma);
        range.remove_prefix(comma == range.size() ? comma : comma + 1);
        const std::size_t dash = item.find('-');
        auto lo = number(item.substr(0, dash));
        auto hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1));
        if (!lo) return std::unexpected(lo.error());
        if (!hi) return std::unexpected(hi.error());
        if (*hi < *lo) return std::unexpected("a range " + std::string(item) + " that runs backwards");
        // "01-10" pads to the lower bound's width; "1-10" does not pad.
        const std::size_t width = item[0] == '0' ? std::min(dash, item.size()) : 0;
        piece.ranges.push_back(Range{.lo = *lo, .hi = *hi, .width = width});
        numbers += std::size_t{*hi} - *lo + 1;
        if (numbers > k_max_hostlist_names) break;
      }
      if (piece.ranges.empty()) return std::unexpected(std::string("empty brackets"));
      count = numbers > k_max_hostlist_names ? numbers : count * numbers;
      if (count > k_max_hostlist_names) break;
      pattern.push_back(std::move(piece));
      i = close + 1;
    }
    out.m_size += count;
    if (out.m_size > k_max_hostlist_names)
      return std::unexpected("it names more than " + std::to_string(k_max_hostlist_names) +
                             " nodes; give tiers import the cluster a part at a time");
    out.m_patterns.push_back(std::move(pattern));
  }
  return out;
}

bool Hostlist::for_each(const std::function<bool(const std::string&)>& each) const {
  for (const Pattern& pattern : m_patterns) {
    // An odometer over the pattern's ranges: the last piece turns fastest.
    std::vector<std::size_t> range(pattern.size(), 0);
    std::vector<unsigned> value(pattern.size(), 0);
    for (std::size_t p = 0; p < pattern.size(); ++p)
      if (!pattern[p].ranges.empty()) value[p] = pattern[p].ranges[0].lo;
    for (;;) {
      std::string name;
      for (std::size_t p = 0; p < pattern.size(); ++p) {
        if (pattern[p].ranges.empty()) {
          name += pattern[p].text;
          continue;
        }
        const std::string digits = std::to_string(value[p]);
        const std::size_t width = pattern[p].ranges[range[p]].width;
        if (digits.size() < width) name.append(width - digits.size(), '0');
        name += digits;
      }
      if (!each(name)) return false;
      std::size_t p = pattern.size();
      for (; p > 0; --p) {
        const Piece& piece = pattern[p - 1];
        if (piece.ranges.empty()) continue;
        if (value[p - 1] < piece.ranges[range[p - 1]].hi) {
          ++value[p - 1];
          break;
        }
        if (range[p - 1] + 1 < piece.ranges.size()) {
          value[p - 1] = piece.ranges[++range[p - 1]].lo;
          break;
        }
        range[p - 1] = 0;
        value[p - 1] = piece.ranges[0].lo;
      }
      if (p == 0) break;
    }
  }
  return true;
}

}  // namespace orc::inventory::detail
