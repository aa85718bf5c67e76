#pragma once
// JSON from outside (an image config, a registry manifest) may nest arrays
// and objects as deep as its size allows: 4 MiB of '[' is four million
// levels. nlohmann's dump() and operator== recurse once per level (a stack
// overflow past some 60,000), and each level it builds costs a node and an
// allocation (some 80 bytes: 320 MiB for those 4 MiB). The depth is read
// from the text first, in one pass that holds nothing, so such input is
// refused before anything is built from it.
#include <cstddef>
#include <string_view>

namespace orc::util {

// Whether `text` nests arrays and objects at most `limit` deep, counted
// outside strings (a '[' inside "..." is a character). Text that is not
// JSON passes or fails as its brackets say: the parser judges the rest.
bool json_nesting_within(std::string_view text, std::size_t limit);

}  // namespace orc::util
