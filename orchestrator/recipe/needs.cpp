// `needs:` of a recipe: the CUDA libraries its build links beyond what every
// build needs (nvcc, cudart, libcu++), named as compat's part table names
// them, so planning refuses a toolkit or image that lacks one.
#include <algorithm>

#include "orchestrator/compat/toolkit_parts.hpp"
#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::recipe::detail {

std::vector<Need> parse_needs(Reader& reader, const YAML::Node& node) {
  std::vector<Need> out;
  if (!reader.expect_list(node, "of CUDA library names for 'needs'")) return out;
  const auto names = compat::declarable_part_names();
  for (const auto& item : node) {
    const auto name = reader.string(item, "in 'needs'");
    if (!name) continue;
    const compat::ToolkitPartInfo* info = compat::find_part(*name);
    if (info && info->always) {
      reader.error(item, "'" + *name + "' need not be listed: every build needs it, and every toolkit planned has it");
      continue;
    }
    if (!info) {
      std::string suggestion = util::did_you_mean(*name, names);
      std::string message = "unknown CUDA library '" + *name + "'";
      if (suggestion.empty()) {
        message += " (known:";
        for (const auto known : names) (message += ' ') += known;
        message += ")";
      }
      reader.error(item, std::move(message), std::move(suggestion));
      continue;
    }
    if (std::ranges::any_of(out, [&](const Need& n) { return n.part == info->part; })) {
      reader.error(item, "duplicate library '" + *name + "' in 'needs'");
      continue;
    }
    out.push_back({.part = info->part, .where = reader.where(item)});
  }
  return out;
}

}  // namespace orc::recipe::detail
