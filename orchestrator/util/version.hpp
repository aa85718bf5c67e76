#pragma once
// Dotted versions ("12.4", "9.1.0.70", "2.11") and ranges over them
// (">=12.1,<13", "12.4" meaning any 12.4.x). Components compare numerically;
// missing trailing components count as zero, so 12.4 == 12.4.0.
#include <compare>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orc::util {

class Version {
 public:
  Version() = default;
  explicit Version(std::vector<int> parts) : m_parts(std::move(parts)) {}
  Version(int major, int minor) : m_parts{major, minor} {}

  static std::expected<Version, std::string> parse(std::string_view text);

  int major() const { return component(0); }
  int minor() const { return component(1); }
  int component(std::size_t i) const { return i < m_parts.size() ? m_parts[i] : 0; }
  std::size_t size() const { return m_parts.size(); }
  bool empty() const { return m_parts.empty(); }
  // The text it was parsed from ("580.65.06" keeps its zero), else the
  // components joined with dots.
  std::string str() const;
  // The first `n` components ("12.4" from 12.4.1).
  Version truncated(std::size_t n) const;
  // The smallest version above every version that has this one as prefix
  // (12.4 -> 12.5, 12 -> 13).
  Version prefix_successor() const;

  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == 0; }

 private:
  std::vector<int> m_parts;
  std::string m_text;
};

// A conjunction of bounds. Empty text or "*" means any version.
class VersionRange {
 public:
  struct Bound {
    Version version;
    bool inclusive = true;
  };

  static std::expected<VersionRange, std::string> parse(std::string_view text);

  bool contains(const Version& v) const;
  // False when no version can satisfy every clause (">=13,<12").
  bool satisfiable() const;
  const std::optional<Bound>& lower() const { return m_lower; }
  const std::optional<Bound>& upper() const { return m_upper; }
  const std::string& text() const { return m_text; }
  bool any() const { return !m_lower && !m_upper; }

 private:
  void add_lower(Bound b);
  void add_upper(Bound b);

  std::optional<Bound> m_lower;
  std::optional<Bound> m_upper;
  std::string m_text;
};

}  // namespace orc::util
