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

#include "orchestrator/util/version.hpp"

namespace orc::compat {

// The oldest driver whose JIT compiles PTX of `isa`; nullopt when no toolkit
// of the table emits it (newer than the table).
std::optional<util::Version> driver_for_ptx_isa(const util::Version& isa);

// The newest PTX ISA `driver` compiles; empty when the driver is older than
// every row with a known ISA.
util::Version ptx_isa_for_driver(const util::Version& driver);

// Whether `driver` is at or past the GA driver of the newest toolkit the
// table knows: what it compiles beyond the table's ISAs is not known.
bool driver_newer_than_table(const util::Version& driver);

// The oldest driver a CUDA runtime of this major runs on (11: 450.80.02,
// 12: 525.60.13, 13: 580.65.06); nullopt for majors the table does not know.
std::optional<util::Version> driver_for_runtime(int major);

}  // namespace orc::compat
