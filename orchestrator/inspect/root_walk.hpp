#pragma once
// Symbolic links followed inside an image's root, never out of it (issue
// 28): a scan that took `libcudart.so.12 -> /etc/shadow` for a bundled CUDA
// runtime listed the host's file, or no file at all, as the image's. Links
// resolve as the kernel resolves them in a container whose root is the
// image's: an absolute target from the image's root, '..' stopping at it,
// each link on the way followed, at most 40 of them.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace orc::inspect {

// What the image holds at a path (normalized, relative; "" for the root).
struct RootEntry {
  enum class Type { missing, directory, file, symlink };
  Type type = Type::missing;
  std::string target;  // a symbolic link's, as stored
};
using RootLookup = std::function<RootEntry(std::string_view path)>;

// The file (normalized, relative) that `path` (absolute or relative to the
// root) leads to; nullopt when it leads to no file of the image: a missing
// target, a directory, a loop, more than 40 links.
std::optional<std::string> resolve_in_root(std::string_view path, const RootLookup& lookup);

}  // namespace orc::inspect
