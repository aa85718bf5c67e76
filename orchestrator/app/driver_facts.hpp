#pragma once
// The driver facts a verdict needs (inspect::DriverFacts), looked up in
// compat's tables for one driver version, or for none.
#include <optional>

#include "orchestrator/inspect/verdict.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::app {

inspect::DriverFacts driver_facts(const std::optional<util::Version>& driver);

}  // namespace orc::app
