#include "orchestrator/inspect/root_walk.hpp"

#include <vector>

namespace orc::inspect {

namespace {

// Linux's limit on links followed in one lookup (MAXSYMLINKS).
constexpr int k_max_links = 40;
// Components looked at in one walk: bounds the work a crafted target can
// ask for (a link of 4,000 '.' components, followed 40 times).
constexpr std::size_t k_max_steps = 8192;

// Pushes `path`'s components so that the first is on top.
void push(std::vector<std::string>& pending, std::string_view path) {
  std::size_t end = path.size();
  while (end > 0) {
    const auto slash = path.rfind('/', end - 1);
    const std::size_t start = slash == std::string_view::npos ? 0 : slash + 1;
    if (end > start) pending.emplace_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    end = slash;
  }
}

}  // namespace

std::optional<std::string> resolve_in_root(std::string_view path, const RootLookup& lookup) {
  std::vector<std::string> pending;
  push(pending, path);
  std::string at;  // where the walk is, resolved
  int links = 0;
  std::size_t steps = 0;
  bool file = false;
  while (!pending.empty()) {
    if (++steps > k_max_steps) return std::nullopt;
    const std::string name = std::move(pending.back());
    pending.pop_back();
    if (file) return std::nullopt;  // a component under a file
    if (name == ".") continue;
    if (name == "..") {
      const auto slash = at.rfind('/');
      at.resize(slash == std::string::npos ? 0 : slash);
      continue;
    }
    const std::string next = at.empty() ? name : at + "/" + name;
    const RootEntry entry = lookup(next);
    switch (entry.type) {
      case RootEntry::Type::missing:
        return std::nullopt;
      case RootEntry::Type::directory:
        at = next;
        break;
      case RootEntry::Type::file:
        at = next;
        file = true;
        break;
      case RootEntry::Type::symlink:
        if (++links > k_max_links || entry.target.empty()) return std::nullopt;
        // A relative target is read from the link's directory, `at`.
        if (entry.target.starts_with('/')) at.clear();
        push(pending, entry.target);
        break;
    }
  }
  if (!file) return std::nullopt;
  return at;
}

}  // namespace orc::inspect
