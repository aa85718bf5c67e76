#include "orchestrator/util/glob.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "orchestrator/util/strings.hpp"

namespace orc::util {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_any_depth = "**";

// The character at `p` (after a backslash when escaped) and the position
// after it.
std::pair<char, std::size_t> literal_at(std::string_view pattern, std::size_t p) {
  if (pattern[p] == '\\' && p + 1 < pattern.size()) return {pattern[p + 1], p + 2};
  return {pattern[p], p + 1};
}

// Whether `c` is in the set that opens at pattern[open] == '['; the position
// after its ']', or nullopt when the set never closes (the '[' is then an
// ordinary character, as in fnmatch).
std::optional<std::pair<bool, std::size_t>> match_set(std::string_view pattern, std::size_t open, char c) {
  std::size_t i = open + 1;
  const bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
  if (negate) ++i;
  const auto u = static_cast<unsigned char>(c);
  bool in = false;
  // A ']' right after the opening (or the negation) is a member, not the end.
  for (bool first = true; i < pattern.size(); first = false) {
    if (pattern[i] == ']' && !first) return std::pair{in != negate, i + 1};
    const auto [lo, after_lo] = literal_at(pattern, i);
    i = after_lo;
    char hi = lo;
    if (i + 1 < pattern.size() && pattern[i] == '-' && pattern[i + 1] != ']') {
      const auto [h, after_hi] = literal_at(pattern, i + 1);
      hi = h;
      i = after_hi;
    }
    if (static_cast<unsigned char>(lo) <= u && u <= static_cast<unsigned char>(hi)) in = true;
  }
  return std::nullopt;
}

// Whether pattern[p] (not a '*') matches `c`, and the position after it.
std::optional<std::size_t> match_token(std::string_view pattern, std::size_t p, char c) {
  if (pattern[p] == '?') return p + 1;
  if (pattern[p] == '[')
    if (const auto set = match_set(pattern, p, c)) return set->first ? std::optional(set->second) : std::nullopt;
  const auto [want, next] = literal_at(pattern, p);
  return want == c ? std::optional(next) : std::nullopt;
}

bool hidden(std::string_view name) { return !name.empty() && name.front() == '.'; }

// The components of a glob that select something: "a//./b" is "a/b".
std::vector<std::string> components(std::string_view glob) {
  auto parts = split_any(glob, "/");
  std::erase(parts, ".");
  return parts;
}

// `candidate` is inside `root` (both canonical) when root is a prefix of it,
// component by component ("/a/bc" is not inside "/a/b").
bool inside(const fs::path& candidate, const fs::path& root) {
  return std::mismatch(root.begin(), root.end(), candidate.begin(), candidate.end()).first == root.end();
}

enum class HiddenDirs { skip, enter };

// One expansion of one glob under one root: a depth-first walk over
// (directory, component index) states, each state expanded once.
class Walker {
 public:
  Walker(const fs::path& root, std::vector<std::string> parts, HiddenDirs hidden_dirs, GlobLimits limits)
      : m_root(root), m_parts(std::move(parts)), m_hidden_dirs(hidden_dirs), m_limits(limits) {
    std::error_code ec;
    m_canonical_root = fs::canonical(root, ec);
  }

  std::vector<fs::path> run() {
    if (m_parts.empty() || m_canonical_root.empty()) return {};
    if (std::ranges::find(m_parts, "..") != m_parts.end()) return {};
    if (enterable(fs::path())) visit(fs::path(), 0);
    std::ranges::sort(m_found);
    const auto [first, last] = std::ranges::unique(m_found);
    m_found.erase(first, last);
    return std::move(m_found);
  }

 private:
  using DirKey = std::tuple<dev_t, ino_t, std::size_t>;

  bool full() const { return m_found.size() > m_limits.max_matches; }

  // A directory the walk may read: a real one, or a symlink to one that
  // resolves inside the root (one leading out would let `**` walk the disk).
  bool enterable(const fs::path& rel) {
    const fs::path path = m_root / rel;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) != 0) return false;
    if (!S_ISLNK(lst.st_mode)) return true;
    std::error_code ec;
    const fs::path target = fs::canonical(path, ec);
    return !ec && inside(target, m_canonical_root);
  }

  bool regular_file(const fs::path& rel) const {
    struct stat st {};
    return ::stat((m_root / rel).c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }

  std::vector<std::string> sorted_names(const fs::path& rel) const {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(m_root / rel, ec), end; !ec && it != end; it.increment(ec))
      names.push_back(it->path().filename().string());
    std::ranges::sort(names);
    return names;
  }

  // `rel` matched the first `next` components.
  void reached(const fs::path& rel, std::size_t next) {
    if (next == m_parts.size()) {
      if (regular_file(rel)) m_found.push_back(rel);
    } else if (enterable(rel)) {
      visit(rel, next);
    }
  }

  // `rel` is an enterable directory that matched the first `i` components.
  void visit(const fs::path& rel, std::size_t i) {
    if (full()) return;
    struct stat st {};
    if (::stat((m_root / rel).c_str(), &st) != 0) return;
    // A directory reached again (through a symlink, or by a second `**`) at
    // the same component would find the same files again, or loop for ever.
    if (!m_seen.insert({st.st_dev, st.st_ino, i}).second) return;
    const std::string& part = m_parts[i];
    const bool last = i + 1 == m_parts.size();
    if (part == k_any_depth) {
      if (!last) visit(rel, i + 1);  // zero directories
      for (const auto& name : sorted_names(rel)) {
        if (full()) return;
        if (hidden(name) && m_hidden_dirs == HiddenDirs::skip) continue;
        const fs::path child = rel / name;
        if (enterable(child))
          visit(child, i);  // one more directory
        else if (last && !hidden(name) && regular_file(child))
          m_found.push_back(child);
      }
    } else if (!glob_has_wildcard(part)) {
      reached(rel / part, i + 1);
    } else {
      for (const auto& name : sorted_names(rel))
        if (!full() && glob_match(part, name)) reached(rel / name, i + 1);
    }
  }

  fs::path m_root;
  fs::path m_canonical_root;
  std::vector<std::string> m_parts;
  HiddenDirs m_hidden_dirs;
  GlobLimits m_limits;
  std::set<DirKey> m_seen;
  std::vector<fs::path> m_found;
};

}  // namespace

bool glob_match(std::string_view pattern, std::string_view name) {
  if (hidden(name) && !hidden(pattern)) return false;
  // Iterative matching with one backtrack point (the last star): every other
  // token matches exactly one character, so the first fit after a star is
  // as good as any.
  std::size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
      continue;
    }
    if (p < pattern.size())
      if (const auto next = match_token(pattern, p, name[n])) {
        p = *next;
        ++n;
        continue;
      }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    n = ++resume;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool glob_has_wildcard(std::string_view component) {
  return component.find_first_of("*?[\\") != std::string_view::npos;
}

std::vector<fs::path> glob_files(const fs::path& root, std::string_view glob, GlobLimits limits) {
  return Walker(root, components(glob), HiddenDirs::skip, limits).run();
}

std::vector<std::string> glob_near_misses(std::span<const fs::path> roots, std::string_view glob, std::size_t count) {
  const auto parts = components(glob);
  if (parts.empty() || parts.back() == k_any_depth) return {};
  // Same name anywhere, hidden directories too: a file the glob missed only
  // because it sits under .libs/ is the one worth naming.
  std::vector<std::string> names;
  for (const auto& root : roots)
    for (const auto& rel : Walker(root, {std::string(k_any_depth), parts.back()}, HiddenDirs::enter, {}).run())
      if (std::ranges::find(names, rel.generic_string()) == names.end()) names.push_back(rel.generic_string());
  std::vector<std::pair<std::size_t, std::string>> ranked;
  for (auto& name : names) ranked.emplace_back(edit_distance(glob, name), std::move(name));
  std::ranges::sort(ranked);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < ranked.size() && i < count; ++i) out.push_back(std::move(ranked[i].second));
  return out;
}

}  // namespace orc::util
