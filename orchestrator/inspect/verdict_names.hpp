#pragma once
// The names verdicts give a set of images (private to the inspect module:
// verdict.cpp and verdict_file.cpp both print them).
#include <set>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/inspect/module.hpp"

namespace orc::inspect {

// "sm_80, sm_90", or with `ptx` "compute_80, compute_90".
std::string cc_names(const std::set<arch::ComputeCapability>& ccs, bool ptx);
// The archs of PTX images, as cc_names prints them.
std::string ptx_names(const std::vector<PtxImage>& ptx);

}  // namespace orc::inspect
