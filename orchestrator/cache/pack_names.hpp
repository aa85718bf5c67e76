#pragma once
// Entry names and link targets as pack and unpack accept them (private to
// the cache module).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orc::cache {

// The components of a relative name with '.' and empty ones dropped; nullopt
// for an absolute name, a '..' component, or nothing left.
std::optional<std::vector<std::string>> split_safe_name(std::string_view name);

// Whether a symlink at `link_depth` directories below the root, pointing at
// `target`, stays inside the root however it is resolved: relative, its '..'
// components all leading and no more of them than link_depth. '..' after a
// named component is refused because the component may itself be a symlink,
// whose parent is not the lexical one.
bool symlink_stays_inside(std::string_view target, std::size_t link_depth);

}  // namespace orc::cache
