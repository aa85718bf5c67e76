#pragma once
// The driver facts a verdict needs (inspect::DriverFacts), looked up in
// compat's tables for one driver version, or for none.
#include <optional>
#include <string>

#include "orchestrator/inspect/verdict.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::site {

inspect::DriverFacts driver_facts(const std::optional<util::Version>& driver);

// The driver a node's verdicts are judged against: the kernel module's
// release ("580.159.04"), or, where the user-space driver serves a newer CUDA
// than that release's (cuDriverGetVersion, e.g. 13000; CUDA forward
// compatibility's cuda-compat package), the GA driver of that CUDA version.
// nullopt when neither is known.
std::optional<util::Version> node_driver(const std::string& kernel_module_version, int driver_cuda_version);

}  // namespace orc::site
