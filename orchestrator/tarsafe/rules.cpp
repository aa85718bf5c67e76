// The entry rules of rules.hpp: the table there, one check at a time.
#include "orchestrator/tarsafe/rules.hpp"

#include <sys/stat.h>

#include <algorithm>

namespace orc::tarsafe {

namespace {

std::vector<std::string_view> split(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto slash = path.find('/', start);
    const auto end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string_view>& parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i) out += '/';
    out += parts[i];
  }
  return out;
}

std::string quoted(std::string_view target) { return "('" + std::string(target) + "')"; }

// The lexical rule of rules.hpp for a symlink `depth` directories below the
// root: relative, its ".." all leading and no more of them than `depth`.
std::expected<void, std::string> check_symlink_target(std::string_view target, std::size_t depth) {
  if (target.empty()) return std::unexpected("is a symlink with an empty target");
  if (target.size() > k_max_name_bytes)
    return std::unexpected("is a symlink whose target is over " + std::to_string(k_max_name_bytes) + " bytes");
  if (target.starts_with('/')) return std::unexpected("is a symlink to an absolute path " + quoted(target));
  std::size_t ups = 0;
  bool named = false;
  for (const auto part : split(target)) {
    if (part == ".") continue;
    if (part != "..") {
      named = true;
    } else if (named) {
      return std::unexpected("is a symlink " + quoted(target) + " with a '..' after a name (only leading '..' are " +
                             "accepted: the name may be a link)");
    } else if (++ups > depth) {
      return std::unexpected("is a symlink " + quoted(target) + " that resolves outside the destination");
    }
  }
  return {};
}

enum class Resolution { inside, outside, loops };

// Follows `target` from the directory holding `link_path` through the
// archive's own symlinks, the way the kernel would after extraction.
Resolution resolve(const std::string& link_path, const std::string& target,
                   const std::unordered_map<std::string, std::string>& links) {
  std::vector<std::string> where;
  for (const auto part : split(link_path)) where.emplace_back(part);
  where.pop_back();  // the link's directory
  std::vector<std::string> todo;
  for (const auto part : split(target)) todo.emplace_back(part);
  std::ranges::reverse(todo);  // a stack: back() is the next component
  int hops = 0;
  while (!todo.empty()) {
    const std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      if (where.empty()) return Resolution::outside;
      where.pop_back();
      continue;
    }
    where.push_back(part);
    std::string at;
    for (const auto& w : where) at += (at.empty() ? "" : "/") + w;
    const auto it = links.find(at);
    if (it == links.end()) continue;
    if (++hops > k_max_link_hops) return Resolution::loops;
    if (it->second.starts_with('/')) return Resolution::outside;
    where.pop_back();
    const auto more = split(it->second);
    for (auto m = more.rbegin(); m != more.rend(); ++m) todo.emplace_back(*m);
  }
  return Resolution::inside;
}

unsigned perm_of(Kind kind, unsigned mode) {
  // Never setuid, setgid or sticky; a directory stays the owner's to fill
  // and is never writable by others.
  return kind == Kind::directory ? (mode & 0755) | 0700 : mode & 0777;
}

}  // namespace

Kind kind_of(unsigned filetype, bool hardlink) {
  if (hardlink) return Kind::hardlink;
  switch (filetype & S_IFMT) {
    case S_IFREG:
      return Kind::file;
    case S_IFDIR:
      return Kind::directory;
    case S_IFLNK:
      return Kind::symlink;
    case S_IFCHR:
      return Kind::char_device;
    case S_IFBLK:
      return Kind::block_device;
    case S_IFIFO:
      return Kind::fifo;
    case S_IFSOCK:
      return Kind::socket;
    default:
      return Kind::unknown;
  }
}

std::expected<std::string, std::string> normalize(std::string_view name) {
  if (name.empty()) return std::unexpected("has an empty name");
  if (name.starts_with('/')) return std::unexpected("has an absolute path");
  if (name.size() > k_max_name_bytes)
    return std::unexpected("has a name over " + std::to_string(k_max_name_bytes) + " bytes");
  std::vector<std::string_view> kept;
  for (const auto part : split(name)) {
    if (part == "..") return std::unexpected("has a '..' component");
    if (part.size() > k_max_component_bytes)
      return std::unexpected("has a name component over " + std::to_string(k_max_component_bytes) + " bytes");
    if (part != ".") kept.push_back(part);
  }
  return join(kept, kept.size());
}

Rules::Rules(Limits limits) : m_limits(limits) { m_made.emplace("", Kind::directory); }

std::expected<Accepted, Refusal> Rules::check(const Entry& entry) {
  const auto refuse = [&](std::string reason) {
    return std::unexpected(Refusal{std::string(entry.name), std::move(reason)});
  };
  auto path = normalize(entry.name);
  if (!path) return refuse(path.error());
  if (path->empty() && entry.kind != Kind::directory) return refuse("names the destination itself");
  if (auto parents = check_parents(*path); !parents) return refuse(parents.error());
  if (const auto it = m_made.find(*path);
      it != m_made.end() && !(it->second == Kind::directory && entry.kind == Kind::directory))
    return refuse("repeats an earlier entry's path");
  auto link = check_kind(entry, *path);
  if (!link) return refuse(link.error());
  record(entry, *path, *link);
  return Accepted{.path = std::move(*path), .link = std::move(*link), .perm = perm_of(entry.kind, entry.mode)};
}

std::expected<void, Refusal> Rules::finish() const {
  for (const Link& link : m_links) {
    switch (resolve(link.path, link.target, m_targets)) {
      case Resolution::inside:
        break;
      case Resolution::outside:
        return std::unexpected(
            Refusal{link.name, "is a symlink " + quoted(link.target) + " that resolves outside the destination"});
      case Resolution::loops:
        return std::unexpected(Refusal{link.name, "is a symlink " + quoted(link.target) + " in a loop"});
    }
  }
  return {};
}

std::expected<void, std::string> Rules::check_parents(const std::string& path) const {
  const auto parts = split(path);
  for (std::size_t n = 1; n < parts.size(); ++n) {
    const std::string parent = join(parts, n);
    const auto it = m_made.find(parent);
    if (it == m_made.end() || it->second == Kind::directory) continue;
    if (it->second == Kind::symlink) return std::unexpected("lies below the archive's symlink '" + parent + "'");
    return std::unexpected("lies below '" + parent + "', which is not a directory");
  }
  return {};
}

// The kind's own rule; what Accepted::link holds.
std::expected<std::string, std::string> Rules::check_kind(const Entry& entry, const std::string& path) {
  switch (entry.kind) {
    case Kind::directory:
      return std::string();
    case Kind::file:
      if (m_limits.max_bytes && entry.size > m_limits.max_bytes - m_declared)
        return std::unexpected("takes the files past the " + std::to_string(m_limits.max_bytes) + " bytes expected");
      m_declared += entry.size;
      return std::string();
    case Kind::hardlink:
      return check_hardlink(entry.link);
    case Kind::symlink:
      if (auto ok = check_symlink_target(entry.link, split(path).size() - 1); !ok) return std::unexpected(ok.error());
      return std::string(entry.link);
    case Kind::char_device:
    case Kind::block_device:
      return std::unexpected("is a device file");
    case Kind::fifo:
    case Kind::socket:
      return std::unexpected("is a FIFO or socket");
    case Kind::unknown:
      break;
  }
  return std::unexpected("has an unknown file type");
}

std::expected<std::string, std::string> Rules::check_hardlink(std::string_view link) const {
  auto target = normalize(link);
  if (!target) return std::unexpected("is a hard link whose target " + target.error());
  if (const auto it = m_made.find(*target); target->empty() || it == m_made.end() || it->second != Kind::file)
    return std::unexpected("is a hard link to '" + *target + "', not an earlier regular file");
  return std::move(*target);
}

void Rules::record(const Entry& entry, const std::string& path, const std::string& link) {
  const auto parts = split(path);
  for (std::size_t n = 1; n < parts.size(); ++n) m_made.emplace(join(parts, n), Kind::directory);
  m_made.emplace(path, entry.kind == Kind::hardlink ? Kind::file : entry.kind);
  if (entry.kind != Kind::symlink) return;
  m_targets.emplace(path, link);
  m_links.push_back({std::string(entry.name), path, link});
}

}  // namespace orc::tarsafe
