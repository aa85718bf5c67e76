#pragma once
// Host lists as pdsh's dshbak -c and ClusterShell's clush -b / clubak -b
// print them over output that several nodes share: names separated by
// commas, each with any number of bracketed ranges ("gpu[01-04,07]",
// "rack[1-2]-gpu[1-8]", "login1"); clush adds the count, "gpu[01-04] (4)".
// A range keeps the width of its lower bound when that has a leading zero
// (01-10: gpu01 ... gpu10), as pdsh and ClusterShell write them. Private to
// the module (the nvidia-smi reader's).
#include <cstddef>
#include <expected>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace orc::inventory::detail {

// The most names one host list may expand to: a large cluster's GPU nodes.
inline constexpr std::size_t k_max_hostlist_names = std::size_t{1} << 17;
// The most all host lists of one input may expand to together: each name
// gets its list's lines, so this bounds the work a short input can ask for.
inline constexpr std::size_t k_max_hostlist_total = std::size_t{1} << 18;

class Hostlist {
 public:
  // An error says what is wrong ("a range 9-1 that runs backwards").
  static std::expected<Hostlist, std::string> parse(std::string_view text);
  std::size_t size() const { return m_size; }
  // Each name in order, until `each` returns false; false then.
  bool for_each(const std::function<bool(const std::string&)>& each) const;

 private:
  // A piece of a name: literal text, or a set of numbers.
  struct Range {
    unsigned lo = 0, hi = 0;  // inclusive
    std::size_t width = 0;    // zero-padded to it
  };
  struct Piece {
    std::string text;
    std::vector<Range> ranges;  // empty: literal
  };
  using Pattern = std::vector<Piece>;
  std::vector<Pattern> m_patterns;
  std::size_t m_size = 0;
};

}  // namespace orc::inventory::detail
