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

ArchSet select_archs(std::span<const ComputeCapability> devices, PtxPolicy policy) {
  ArchSet out;
  for (const auto& cc : devices) out.sass.insert(cc.base());
  if (out.sass.empty()) return out;
  switch (policy) {
    case PtxPolicy::none:
      break;
    case PtxPolicy::highest:
      out.ptx.insert(*out.sass.rbegin());
      break;
    case PtxPolicy::all:
      out.ptx = out.sass;
      break;
  }
  return out;
}

}  // namespace orc::arch
