#pragma once
// The targets a build embeds: SASS (real) and PTX (virtual) compute
// capabilities. Every framework emitter reads this one set.
#include <set>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"

namespace orc::arch {

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

}  // namespace orc::arch
