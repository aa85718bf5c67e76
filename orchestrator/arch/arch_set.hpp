#pragma once
// The targets a build embeds: SASS (real) and PTX (virtual) compute
// capabilities. Every framework emitter reads this one set.
#include <set>
#include <span>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"

namespace orc::arch {

// How much PTX a tier embeds besides SASS for each of its CCs: none, one PTX
// at the highest CC (the production default: forward compatibility for newer
// GPUs by JIT), or PTX for every CC.
enum class PtxPolicy { none, highest, all };

struct ArchSet {
  std::set<ComputeCapability> sass;
  std::set<ComputeCapability> ptx;

  bool empty() const { return sass.empty() && ptx.empty(); }
  // Every CC mentioned, SASS or PTX, ascending.
  std::set<ComputeCapability> all() const;
  std::vector<std::string> sass_names() const;  // ["sm_80", "sm_90a"]
  std::vector<std::string> ptx_names() const;   // ["compute_90"]

  friend bool operator==(const ArchSet&, const ArchSet&) = default;
};

// SASS for every distinct device CC (variants dropped: devices are plain
// CCs), PTX per the policy.
ArchSet select_archs(std::span<const ComputeCapability> devices, PtxPolicy policy);

}  // namespace orc::arch
