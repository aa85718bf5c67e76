#pragma once
// The resolver: for one recipe x tier, the newest toolkit (and cuDNN) that the
// recipe's ranges allow and that compiles SASS for every CC of the tier, with
// the arch set to build; or Unsatisfiable with reasons that name the GPU, its
// CC and the constraint, plus the split of the tier that would resolve.
// An outcome, never an exception.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "orchestrator/arch/arch_set.hpp"
#include "orchestrator/compat/cudnn.hpp"
#include "orchestrator/compat/toolkit_parts.hpp"
#include "orchestrator/compat/toolkits.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::compat {

struct TargetGpu {
  std::string name;  // "Tesla K80", or "8.6" when the tier gave a CC
  arch::ComputeCapability cc;
};

// A version range and who asked for it, for messages:
// {">=12.0", "recipe requires cuda"} -> "recipe requires cuda >=12.0".
struct RangeConstraint {
  util::VersionRange range;
  std::string origin;
  std::string describe() const;
};

struct ResolveRequest {
  std::vector<TargetGpu> gpus;
  arch::PtxPolicy ptx = arch::PtxPolicy::highest;
  std::optional<RangeConstraint> cuda;
  std::optional<RangeConstraint> cudnn;
  std::optional<RangeConstraint> gcc;  // the host compiler the build uses
  bool needs_cudnn = false;
  std::optional<util::Version> driver;    // oldest driver on the tier's nodes
  std::vector<util::Version> candidates;  // toolkits builds may use; empty = every released one
  // Candidates that are installed but lack a part the build needs (cudart,
  // libcu++, a library of the recipe's `needs:`): never chosen, and named
  // with the reason when nothing else serves.
  std::vector<ToolkitShortfall> shortfalls;
  // The toolkit rows to choose from: the sourced table when null, or one a
  // caller learned from probes (ToolkitTable::learn). It outlives the
  // Resolution, whose toolkit points into it.
  const ToolkitTable* table = nullptr;

  const ToolkitTable& toolkits() const { return table ? *table : ToolkitTable::known(); }
};

struct Resolution {
  const Toolkit* toolkit = nullptr;
  const CudnnRelease* cudnn = nullptr;  // null when the framework does not use cuDNN
  arch::ArchSet archs;
  std::vector<std::string> reasons;   // why this toolkit, why not the newer ones
  std::vector<std::string> warnings;  // deprecations, UNCONFIRMED facts, JIT exposure
};

struct Unsatisfiable {
  std::vector<std::string> reasons;
  // Groups of GPU names that resolve on their own, oldest first; empty when
  // even a single GPU cannot resolve.
  std::vector<std::vector<std::string>> split;
  std::vector<const Toolkit*> split_toolkits;  // the toolkit of each group of `split`
  std::string split_hint;                      // the split in words, or empty
};

using Outcome = std::variant<Resolution, Unsatisfiable>;

Outcome resolve(const ResolveRequest& request);

}  // namespace orc::compat
