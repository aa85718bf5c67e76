#pragma once
// What a driver can run, from the toolkit table: the PTX ISA its JIT
// compiles, and the CUDA runtimes it serves.
//
// A driver compiles PTX up to the ISA of the newest toolkit it ships with or
// after: PTX of ISA X needs at least the GA driver of the first toolkit that
// emits X (cuda-python's get_minimal_required_cuda_ver_from_ptx_ver maps PTX
// ISA to "the minimal CUDA driver ... needed to load a PTX"), else
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222, cuda-compat.md 6.1). A CUDA runtime
// of major M runs on any driver at or above the minor-version-compatibility
// floor of M (cuda-compat.md 2.3, [NV-MVC]).
#include <optional>
#include <string_view>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::compat {

// The oldest driver whose JIT compiles PTX of `isa`; nullopt when no toolkit
// of the table emits it (newer than the table).
std::optional<util::Version> driver_for_ptx_isa(const util::Version& isa);
// The CUDA version that driver reports (the toolkit's, 8.7 -> 12.8), as
// NVIDIA_REQUIRE_* compares `cuda`; nullopt as above, or for no ISA.
std::optional<util::Version> cuda_for_ptx_isa(const util::Version& isa);

// The newest PTX ISA `driver` compiles; empty when the driver is older than
// every row with a known ISA.
util::Version ptx_isa_for_driver(const util::Version& driver);

// Whether `driver` is at or past the GA driver of the newest toolkit the
// table knows: what it compiles beyond the table's ISAs is not known. When a
// newer toolkit's minimum is not known (13.5), only a later driver branch
// than the newest known minimum's counts.
bool driver_newer_than_table(const util::Version& driver);

// The oldest driver a CUDA runtime of this major runs on (11: 450.80.02,
// 12: 525.60.13, 13: 580.65.06); nullopt for majors the table does not know.
std::optional<util::Version> driver_for_runtime(int major);

// The last driver branch that runs GPUs of this compute capability, for the
// generations NVIDIA's drivers have dropped: Kepler (3.0, 3.2, 3.5, 3.7)
// R470; Maxwell (5.0, 5.2, 5.3), Pascal (6.0, 6.1) and Volta (7.0) R580.
// nullopt while support is ongoing, and for CCs the table does not list (the
// Jetson parts 6.2 and 7.2 run JetPack's own driver). Source: NVIDIA, "CUDA
// Toolkit, Driver, and Architecture Matrix", column "Last Driver Support"
// (docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html);
// the 590 and 595 drivers print "supported through the NVIDIA 580.xx Legacy
// drivers ... will ignore this GPU" for a Pascal card (NixOS/nixos-hardware#1880).
std::optional<int> last_driver_branch(arch::ComputeCapability cc);

// The first Linux driver branch that drives any GPU of this compute
// capability, and the first version of it a source names: a tier whose
// driver branch is older cannot run that GPU at all (an H100 on R470). Only
// the generations a source shows (driver.cpp, each row with where it was
// read); nullopt for the others and for Jetson parts (JetPack's driver).
// Branch-level on purpose: a toolkit's minimum driver can lie above the
// first driver that drives a GPU (H100 PCIe: 520.56.06 < CUDA 11.8's
// 520.61.05), so a tier is refused only below the branch.
struct FirstDriver {
  int branch = 0;          // 520
  std::string_view first;  // "520.56.06"
  std::string_view source;
};
std::optional<FirstDriver> first_driver_branch(arch::ComputeCapability cc);

}  // namespace orc::compat
