#include "orchestrator/util/version.hpp"

#include <charconv>

#include "orchestrator/util/strings.hpp"

namespace orc::util {

std::expected<Version, std::string> Version::parse(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::unexpected("empty version");
  std::vector<int> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = text.find('.', start);
    const auto piece = text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    int value = 0;
    const auto* end = piece.data() + piece.size();
    const auto [ptr, ec] = std::from_chars(piece.data(), end, value);
    if (piece.empty() || ec != std::errc{} || ptr != end || value < 0 || piece.size() > 9)
      return std::unexpected("'" + std::string(text) + "' is not a version (expected numbers separated by dots, like 12.4)");
    parts.push_back(value);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (parts.size() > 4) return std::unexpected("'" + std::string(text) + "' has more than four components");
  Version v(std::move(parts));
  v.m_text = std::string(text);
  return v;
}

std::string Version::str() const {
  if (!m_text.empty()) return m_text;
  std::string out;
  for (std::size_t i = 0; i < m_parts.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(m_parts[i]);
  }
  return out;
}

Version Version::truncated(std::size_t n) const {
  std::vector<int> parts;
  for (std::size_t i = 0; i < n; ++i) parts.push_back(component(i));
  return Version(std::move(parts));
}

Version Version::prefix_successor() const {
  auto parts = m_parts;
  if (parts.empty()) return Version({1});
  ++parts.back();
  return Version(std::move(parts));
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  const std::size_t n = std::max(a.m_parts.size(), b.m_parts.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (auto c = a.component(i) <=> b.component(i); c != 0) return c;
  }
  return std::strong_ordering::equal;
}

void VersionRange::add_lower(Bound b) {
  if (!m_lower || b.version > m_lower->version || (b.version == m_lower->version && !b.inclusive)) m_lower = std::move(b);
}

void VersionRange::add_upper(Bound b) {
  if (!m_upper || b.version < m_upper->version || (b.version == m_upper->version && !b.inclusive)) m_upper = std::move(b);
}

std::expected<VersionRange, std::string> VersionRange::parse(std::string_view text) {
  VersionRange range;
  range.m_text = std::string(trim(text));
  // Clauses are separated by commas or spaces; an operator may stand apart
  // from its version (">= 12.1, < 13").
  std::vector<std::string> clauses;
  for (auto& token : split_any(text, ", \t")) {
    if (!clauses.empty() && clauses.back().find_first_not_of("<>=!~") == std::string::npos)
      clauses.back() += token;
    else
      clauses.push_back(std::move(token));
  }
  for (const auto& raw : clauses) {
    std::string_view clause = raw;
    if (clause == "*") continue;
    std::string_view op;
    for (std::string_view candidate : {">=", "<=", "==", "!=", "~=", ">", "<", "="}) {
      if (clause.starts_with(candidate)) {
        op = candidate;
        break;
      }
    }
    if (op == "!=" || op == "~=")
      return std::unexpected("operator '" + std::string(op) + "' is not supported (use >=, >, <=, <, ==)");
    auto version = Version::parse(clause.substr(op.size()));
    if (!version) return std::unexpected("in range '" + range.m_text + "': " + version.error());
    if (op == ">=") {
      range.add_lower({*version, true});
    } else if (op == ">") {
      // ">12" excludes every 12.x, as users mean it; ">12.4" excludes 12.4.x.
      range.add_lower({version->prefix_successor(), true});
    } else if (op == "<=") {
      range.add_upper({version->prefix_successor(), false});
    } else if (op == "<") {
      range.add_upper({*version, false});
    } else {
      // A bare or == version matches every version it prefixes.
      range.add_lower({*version, true});
      range.add_upper({version->prefix_successor(), false});
    }
  }
  return range;
}

bool VersionRange::contains(const Version& v) const {
  if (m_lower && (v < m_lower->version || (v == m_lower->version && !m_lower->inclusive))) return false;
  if (m_upper && (v > m_upper->version || (v == m_upper->version && !m_upper->inclusive))) return false;
  return true;
}

bool VersionRange::satisfiable() const {
  if (!m_lower || !m_upper) return true;
  if (m_lower->version < m_upper->version) return true;
  return m_lower->version == m_upper->version && m_lower->inclusive && m_upper->inclusive;
}

}  // namespace orc::util
