#pragma once
// A container image's file system from its layers (issue 16), as the OCI
// image spec's "Representing Changes" (image-spec layer.md) applies them:
// layers in order, bottom first; an entry replaces whatever a lower layer
// had at its path (a file replacing a directory hides the directory's
// tree, a directory or file under a lower file's path replaces the file);
// `DIR/.wh.NAME` deletes NAME and its tree from the lower layers;
// `DIR/.wh..wh..opq` hides every lower entry under DIR. A whiteout applies
// to lower layers only: an entry of the same layer stays. Within a layer,
// entries apply in the order the layer's tar holds them, as an unpacker
// writes them.
//
// The scanner reads each layer once, as it streams, and keeps what it found
// per (path, layer); this says, at the end, which of those are the image's.
//
// Paths are nodes of a PathTree. Deleting a tree is not done node by node:
// a deletion stamps its directory with the time it happened, and an entry
// is the image's when it was written after every deletion above it (issue
// 28: walking every parent of every path by its full name made 10,000
// nested directories cost 150 s). Each entry costs the components of its
// name, the end one pass over the tree.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/inspect/path_tree.hpp"

namespace orc::inspect {

class LayerMerge {
 public:
  enum class Kind { file, directory, symlink, hardlink, other };
  enum class Op { add, whiteout, opaque };

  // Distinct paths (entries and the directories above them), and entries
  // over all layers: more than any image has, and what keeps the merge's
  // memory bounded.
  static constexpr std::size_t k_max_paths = 2'000'000;
  static constexpr std::size_t k_max_entries = 4'000'000;

  // One entry of a layer: `node` is the path it writes (add), deletes with
  // its tree (whiteout) or empties (opaque). `link` is a symbolic link's
  // target as stored, or a hard link's, normalized; it must outlive the
  // merge.
  struct Change {
    PathTree::Id node;
    Op op;
    Kind kind;
    const std::string* link;
  };
  // What a normalized name changes: a whiteout's name gives the path it
  // deletes, an opaque marker its directory; nullopt for a whiteout that
  // names nothing (".wh.").
  struct Named {
    Op op;
    std::string path;
  };
  static std::optional<Named> classify(std::string_view normalized);

  // By name: the merge keeps its own tree (tests, small inputs).
  LayerMerge();
  // By node: names were interned in `tree` (the scanner's), which must
  // outlive the merge and not grow while it applies.
  explicit LayerMerge(const PathTree& tree);

  // One whole layer on top of those applied.
  std::expected<void, std::string> apply(std::span<const Change> layer);

  // By name: starts the next layer (the first call starts layer 0).
  void begin_layer();
  // An entry of the current layer, by its name in the layer's tar ("usr/lib/x",
  // "./usr/lib/x"). `link` is a hard link's target. The error names what the
  // entry breaks: a '..' component, an empty name, a hard link out of the
  // image.
  std::expected<void, std::string> entry(std::string_view name, Kind kind, std::string_view link = {});
  // Applies what is left and settles which entries survive; call once, after
  // the last layer, before asking.
  void finish();

  struct File {
    std::string path;   // normalized: "usr/lib/libx.so"
    std::size_t layer;  // the layer its bytes are in
    Kind kind;          // file, or hardlink (its bytes are `link`'s)
    std::string link;   // a hard link's target, normalized
  };
  // The image's regular files and hard links, by path.
  std::vector<File> files() const;
  // Its files, hard links and symbolic links (everything but directories).
  std::vector<File> entries() const;
  // Whether `path` as layer `layer` wrote it is what the image holds.
  bool survives(std::string_view path, std::size_t layer) const;
  bool survives(PathTree::Id node, std::size_t layer) const;
  // What the image holds at a node, after finish(): nothing, a directory
  // (written or implied by what is under it), or the entry that survived.
  bool present(PathTree::Id node) const;  // an entry survived there
  bool is_directory(PathTree::Id node) const;
  Kind kind(PathTree::Id node) const { return m_state[node].kind; }
  std::size_t layer(PathTree::Id node) const { return m_state[node].layer; }
  const std::string* link(PathTree::Id node) const { return m_state[node].link; }
  const PathTree& tree() const { return *m_tree; }
  std::size_t layers() const { return m_layer; }

  // "./usr//lib/x" -> "usr/lib/x"; an error for '..' or an empty name.
  static std::expected<std::string, std::string> normalize(std::string_view name);

 private:
  // Times count changes applied: a deletion at time t hides what was
  // written before t.
  struct Node {
    std::uint32_t written = 0;  // the entry's time; 0 for none
    std::uint32_t erased = 0;   // the node and its tree deleted
    std::uint32_t emptied = 0;  // its tree deleted, the node kept
    std::uint32_t layer = 0;
    const std::string* link = nullptr;
    Kind kind = Kind::directory;
  };
  std::expected<void, std::string> apply_at(std::span<const Change> layer, std::size_t index);
  std::expected<std::uint32_t, std::string> tick();
  std::expected<void, std::string> add(const Change& c, std::uint32_t layer);
  File file(PathTree::Id node) const;

  std::unique_ptr<PathTree> m_own;
  const PathTree* m_tree;
  std::vector<Node> m_state;            // by node
  std::vector<std::uint8_t> m_settled;  // after finish(): 1 present, 2 a directory
  std::uint32_t m_clock = 0;
  // The by-name layer not yet applied, and the hard links' targets it names.
  std::vector<Change> m_pending;
  std::deque<std::string> m_links;
  std::size_t m_layer = 0;  // layers begun
  bool m_open = false;
};

}  // namespace orc::inspect
