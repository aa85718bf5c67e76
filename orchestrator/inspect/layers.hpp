#pragma once
// A container image's file system from its layers (issue 16), as the OCI
// image spec's "Representing Changes" (image-spec layer.md) applies them:
// layers in order, bottom first; an entry replaces whatever a lower layer
// had at its path (a file replacing a directory hides the directory's
// tree, a directory or file under a lower file's path replaces the file);
// `DIR/.wh.NAME` deletes NAME and its tree from the lower layers;
// `DIR/.wh..wh..opq` hides every lower entry under DIR. A whiteout applies
// to lower layers only: an entry of the same layer stays.
//
// The scanner reads each layer once, as it streams, and keeps what it found
// per (path, layer); this says, at the end, which of those are the image's.
#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace orc::inspect {

class LayerMerge {
 public:
  enum class Kind { file, directory, symlink, hardlink, other };

  // An image may hold millions of paths; more than this is no image we read.
  static constexpr std::size_t k_max_paths = 8'000'000;

  // Starts the next layer (the first call starts layer 0); the layer before
  // it is applied.
  void begin_layer();
  // An entry of the current layer, by its name in the layer's tar ("usr/lib/x",
  // "./usr/lib/x"). `link` is a hard link's target. The error names what the
  // entry breaks: a '..' component, an empty name, a hard link out of the
  // image, too many paths.
  std::expected<void, std::string> entry(std::string_view name, Kind kind, std::string_view link = {});
  // Applies the current layer; call once after the last entry.
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
  std::size_t layers() const { return m_layer; }

  // "./usr//lib/x" -> "usr/lib/x"; an error for '..' or an empty name.
  static std::expected<std::string, std::string> normalize(std::string_view name);

 private:
  struct Node {
    std::size_t layer;
    Kind kind;
    std::string link;
  };
  void erase_tree(const std::string& dir);  // everything under dir/
  void apply();

  std::map<std::string, Node, std::less<>> m_state;  // the merged view of the applied layers
  // The current layer, applied by begin_layer() or finish().
  std::map<std::string, Node, std::less<>> m_added;
  std::set<std::string> m_whiteouts;
  std::set<std::string> m_opaque;
  std::size_t m_layer = 0;  // layers begun
  bool m_open = false;
};

}  // namespace orc::inspect
