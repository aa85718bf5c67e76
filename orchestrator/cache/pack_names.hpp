#pragma once
// Entry names as pack and place_files accept them (private to the cache
// module).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orc::cache {

// The components of a name as the unpacker accepts it (tarsafe::normalize:
// relative, no '..', not over-long), '.' and empty ones dropped; nullopt
// when refused or nothing is left.
std::optional<std::vector<std::string>> split_safe_name(std::string_view name);

}  // namespace orc::cache
