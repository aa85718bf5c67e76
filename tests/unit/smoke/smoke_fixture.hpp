#pragma once
// A smoke result to start from: one H200 (CC 9.0) that loaded natively, a
// kernel that passed and one skipped. The smoke suite's results and the
// command line's rendering of them use it.
#include "orchestrator/smoke/result.hpp"

namespace orc::smoke::fixtures {

inline SmokeResult passing() {
  SmokeResult r{.tier = "t",
                .fatbin = "k.fatbin",
                .fatbin_sha256 = "ab",
                .driver_version = "580.159.04",
                .driver_cuda_version = 13000};
  GpuResult g{.ordinal = 0, .name = "NVIDIA H200", .cc = {9, 0}};
  g.load = LoadObservation{.outcome = LoadOutcome::native};
  g.kernels.push_back({.name = "saxpy", .status = KernelStatus::passed, .checked = 4});
  g.kernels.push_back({.name = "cluster", .status = KernelStatus::skipped});
  r.gpus.push_back(g);
  return r;
}

}  // namespace orc::smoke::fixtures
