#pragma once
// Where a binary will run: for one GPU, native (a cubin it can load), jit
// (only PTX it can compile: every new process pays the JIT, and users report
// ~17% lower throughput) or none ("no kernel image is available").
#include <optional>
#include <set>
#include <string>

#include "orchestrator/arch/compute_capability.hpp"

namespace orc::inspect {

enum class Outcome { native, jit, none };
std::string_view outcome_name(Outcome o);

struct Verdict {
  Outcome outcome = Outcome::none;
  // The entry that decided it: the best cubin for native, the best PTX for jit.
  std::optional<arch::ComputeCapability> decided_by;
  std::string detail;  // one sentence a user can act on
};

// Rules of cuda-compat.md 6.2 (ComputeCapability::sass_runs_on / ptx_runs_on).
// Among several cubins that load, the highest wins (what the driver picks);
// among PTX, the highest at or below the device.
Verdict judge(const std::set<arch::ComputeCapability>& sass, const std::set<arch::ComputeCapability>& ptx,
              arch::ComputeCapability device);

}  // namespace orc::inspect
