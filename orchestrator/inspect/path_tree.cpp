#include "orchestrator/inspect/path_tree.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

namespace orc::inspect {

namespace {

constexpr std::size_t k_block = 64u << 10;

std::size_t hash_of(PathTree::Id parent, std::string_view name) {
  return std::hash<std::string_view>{}(name) ^ (static_cast<std::size_t>(parent) * 0x9e3779b97f4a7c15ull);
}

// Calls `each` with every non-empty component of `path`, in order, until it
// returns false.
template <typename Each>
void components(std::string_view path, Each each) {
  std::size_t at = 0;
  while (at < path.size()) {
    const auto slash = path.find('/', at);
    const auto end = slash == std::string_view::npos ? path.size() : slash;
    if (end > at && !each(path.substr(at, end - at))) return;
    at = end + 1;
  }
}

}  // namespace

PathTree::PathTree() : m_slots(64, 0) { m_nodes.push_back(Node{.parent = k_root, .size = 0, .name = ""}); }

std::size_t PathTree::slot_of(Id parent, std::string_view name) const {
  const std::size_t mask = m_slots.size() - 1;
  for (std::size_t slot = hash_of(parent, name) & mask;; slot = (slot + 1) & mask) {
    const Id id = m_slots[slot];
    if (id == 0) return slot;
    const Node& n = m_nodes[id];
    if (n.parent == parent && std::string_view(n.name, n.size) == name) return slot;
  }
}

void PathTree::grow_slots() {
  std::vector<Id> old(m_slots.size() * 2, 0);
  old.swap(m_slots);
  const std::size_t mask = m_slots.size() - 1;
  for (const Id id : old) {
    if (id == 0) continue;
    std::size_t slot = hash_of(m_nodes[id].parent, name(id)) & mask;
    while (m_slots[slot] != 0) slot = (slot + 1) & mask;
    m_slots[slot] = id;
  }
}

const char* PathTree::store(std::string_view name) {
  // A name longer than a block gets a block of its own; the current block
  // stays open for the short names that follow.
  if (name.size() > k_block / 4) {
    m_blocks.push_back(std::make_unique<char[]>(name.size()));
    std::memcpy(m_blocks.back().get(), name.data(), name.size());
    return m_blocks.back().get();
  }
  if (name.size() > m_free_size) {
    m_blocks.push_back(std::make_unique<char[]>(k_block));
    m_free = m_blocks.back().get();
    m_free_size = k_block;
  }
  char* at = m_free;
  std::memcpy(at, name.data(), name.size());
  m_free += name.size();
  m_free_size -= name.size();
  return at;
}

PathTree::Id PathTree::add(Id parent, std::string_view name, std::size_t slot) {
  const Id id = static_cast<Id>(m_nodes.size());
  m_nodes.push_back(Node{.parent = parent, .size = static_cast<std::uint32_t>(name.size()), .name = store(name)});
  m_name_bytes += name.size();
  m_slots[slot] = id;
  if (m_nodes.size() * 2 > m_slots.size()) grow_slots();
  return id;
}

std::expected<PathTree::Id, PathTree::Full> PathTree::intern(std::string_view path, std::size_t max_nodes,
                                                             std::uint64_t max_bytes) {
  // The part of the path the tree has, looked up once; what is new is
  // counted against the caps before anything is added.
  Id at = k_root;
  std::size_t rest = path.size();
  components(path, [&](std::string_view name) {
    const Id id = m_slots[slot_of(at, name)];
    if (id == 0) {
      rest = static_cast<std::size_t>(name.data() - path.data());
      return false;
    }
    at = id;
    return true;
  });
  const std::string_view added = path.substr(rest);
  std::size_t nodes = 0;
  std::uint64_t bytes = 0;
  components(added, [&](std::string_view name) {
    ++nodes;
    bytes += name.size();
    return true;
  });
  if (m_nodes.size() + nodes > max_nodes) return std::unexpected(Full::nodes);
  if (m_name_bytes + bytes > max_bytes) return std::unexpected(Full::bytes);
  components(added, [&](std::string_view name) {
    at = add(at, name, slot_of(at, name));
    return true;
  });
  return at;
}

PathTree::Id PathTree::intern(std::string_view path) {
  return *intern(path, std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::uint64_t>::max());
}

std::optional<PathTree::Id> PathTree::child(Id parent, std::string_view name) const {
  const Id id = m_slots[slot_of(parent, name)];
  if (id == 0) return std::nullopt;
  return id;
}

std::optional<PathTree::Id> PathTree::find(std::string_view path) const {
  std::optional<Id> at = k_root;
  components(path, [&](std::string_view name) {
    at = child(*at, name);
    return at.has_value();
  });
  return at;
}

std::string PathTree::path(Id id) const {
  std::size_t size = 0;
  for (Id at = id; at != k_root; at = parent(at)) size += m_nodes[at].size + 1;
  std::string out(size == 0 ? 0 : size - 1, '/');
  std::size_t end = out.size();
  for (Id at = id; at != k_root; at = parent(at)) {
    const Node& n = m_nodes[at];
    std::memcpy(out.data() + (end - n.size), n.name, n.size);
    end = end >= n.size + 1 ? end - n.size - 1 : 0;
  }
  return out;
}

}  // namespace orc::inspect
