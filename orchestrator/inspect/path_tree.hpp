#pragma once
// The names of an image's entries as a tree of components, each component
// stored once (issue 28): 20,000 nested directories cost 20,000 short
// components, not 20,000 paths of up to 40 KB each, and every path shared
// by several layers is one node. A node's full path is built only when a
// report needs it.
//
// A node's parent is always created before it, so parent ids are smaller
// than their children's: one pass in id order visits every parent first.
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orc::inspect {

class PathTree {
 public:
  using Id = std::uint32_t;
  static constexpr Id k_root = 0;

  PathTree();

  // The node of `path` (normalized: "usr/lib/x", "" for the root), added
  // with the directories above it when new; the cap it would pass, and
  // nothing added, when that would make the tree pass `max_nodes` nodes or
  // `max_bytes` bytes of names.
  enum class Full { nodes, bytes };
  std::expected<Id, Full> intern(std::string_view path, std::size_t max_nodes, std::uint64_t max_bytes);
  Id intern(std::string_view path);
  // The node of `path` if the tree has it.
  std::optional<Id> find(std::string_view path) const;
  std::optional<Id> child(Id parent, std::string_view name) const;

  Id parent(Id id) const { return m_nodes[id].parent; }
  std::string_view name(Id id) const { return {m_nodes[id].name, m_nodes[id].size}; }
  // "usr/lib/x"; "" for the root.
  std::string path(Id id) const;
  std::size_t size() const { return m_nodes.size(); }  // nodes, the root included
  std::uint64_t name_bytes() const { return m_name_bytes; }

 private:
  struct Node {
    Id parent;
    std::uint32_t size;
    const char* name;
  };
  std::size_t slot_of(Id parent, std::string_view name) const;
  Id add(Id parent, std::string_view name, std::size_t slot);
  const char* store(std::string_view name);
  void grow_slots();

  std::vector<Node> m_nodes;
  // Open addressing over (parent, name): node ids, 0 for an empty slot (the
  // root is no one's child). Kept under half full.
  std::vector<Id> m_slots;
  // Names live in blocks that never move, so a node's view stays valid.
  std::vector<std::unique_ptr<char[]>> m_blocks;
  char* m_free = nullptr;
  std::size_t m_free_size = 0;
  std::uint64_t m_name_bytes = 0;
};

}  // namespace orc::inspect
