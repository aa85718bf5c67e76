#pragma once
// The devices a set of binaries runs on, as the NVIDIA container toolkit's
// NVIDIA_REQUIRE_ARCH constraint (issues 15 and 16): the toolkit refuses to
// start a container on a GPU whose compute capability the constraint does
// not allow. The syntax (NVIDIA/cloud-native-docs container-toolkit
// docker-specialized.md; libnvidia-container src/cli/dsl.c): `arch`
// compared with the device's "major.minor" by = != < <= > >=, comma-joined
// constraints ANDed, space-separated ones ORed, several NVIDIA_REQUIRE_*
// variables ANDed.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::arch {

// One binary's targets: what runs natively (SASS) and what can be
// JIT-compiled (PTX).
struct Targets {
  std::vector<ComputeCapability> sass;
  std::vector<ComputeCapability> ptx;
  // Beside `ptx` (same order) or empty: the CUDA version a driver must
  // report for its JIT to compile that PTX (the first toolkit that emits
  // its ISA), where the caller's other constraints do not already ask it.
  std::vector<std::optional<util::Version>> ptx_cuda;
};

// A run of device CCs, [low, high); no high: every CC from low up. `cuda`:
// the devices in it run only by JIT of PTX that needs a driver of at least
// this CUDA version.
struct CcInterval {
  ComputeCapability low;
  std::optional<ComputeCapability> high;
  std::optional<util::Version> cuda;
  bool operator==(const CcInterval&) const = default;
};

// The device CCs every one of `binaries` runs on (natively or by JIT, by
// ComputeCapability::sass_runs_on and ptx_runs_on), as disjoint ascending
// intervals. Device CCs are majors 1 to 15 with minors 0 to 9. Where a
// binary has no SASS for a device, the driver JIT-compiles its newest PTX
// that runs there: that PTX's `ptx_cuda`, the most any binary needs, is
// the interval's `cuda`, and intervals split where it changes.
std::vector<CcInterval> runnable_on(std::span<const Targets> binaries);

// Whether a device of `cc` is inside one of `intervals`.
bool allows(std::span<const CcInterval> intervals, ComputeCapability cc);

// "arch>=8.0,arch<9.0 arch>=9.0,cuda>=12.8": the intervals as an
// NVIDIA_REQUIRE_ARCH value (an interval one CC wide is "arch=9.0"; the
// toolkit's rules `cuda`, `driver`, `arch` and `brand` hold in every
// NVIDIA_REQUIRE_* variable); empty when there are none.
std::string require_arch(std::span<const CcInterval> intervals);

}  // namespace orc::arch
