#include "orchestrator/arch/arch_set.hpp"

namespace orc::arch {

std::set<ComputeCapability> ArchSet::all() const {
  std::set<ComputeCapability> out = sass;
  out.insert(ptx.begin(), ptx.end());
  return out;
}

std::vector<std::string> ArchSet::sass_names() const {
  std::vector<std::string> out;
  for (const auto& cc : sass) out.push_back(cc.sm());
  return out;
}

std::vector<std::string> ArchSet::ptx_names() const {
  std::vector<std::string> out;
  for (const auto& cc : ptx) out.push_back(cc.compute());
  return out;
}

}  // namespace orc::arch
