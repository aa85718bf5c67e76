#pragma once
// What each PyTorch release's extension builder accepts in
// TORCH_CUDA_ARCH_LIST: torch/utils/cpp_extension.py's `supported_arches`
// (any entry may carry "+PTX"; anything else raises "Unknown CUDA arch (X)
// or GPU not supported"). A plan for a PyTorch recipe must stay inside the
// list of the release it builds against (issue 13).
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::flags {

struct TorchRelease {
  util::Version version;  // major.minor: "2.4"
  std::vector<arch::ComputeCapability> accepted;
  bool unconfirmed = false;  // part of the list was not read from the release's own file
  std::string_view source;
};

// Ascending; releases whose list no source gave (2.8 - 2.10, 2.12 on) have
// no row.
std::span<const TorchRelease> torch_releases();
// The row of `version`'s major.minor, or nullptr.
const TorchRelease* find_torch_release(const util::Version& version);
// The CUDA versions (major.minor) of each release's official builds, its
// stable and experimental cuXXX wheels: pytorch/pytorch RELEASE.md, "Release
// Compatibility Matrix". An extension builds against one of them (the
// extension builder refuses a toolkit of another CUDA major than torch's).
struct TorchCudaBuilds {
  util::Version version;            // major.minor: "2.4"
  std::vector<util::Version> cuda;  // ascending: 11.8 12.1 12.4
  std::string_view source;
};
// Ascending, 1.13 to 2.14.
std::span<const TorchCudaBuilds> torch_cuda_builds();

// The CCs of `ccs` (variants as written) that `release` rejects.
std::vector<arch::ComputeCapability> torch_rejects(const TorchRelease& release,
                                                   std::span<const arch::ComputeCapability> ccs);

}  // namespace orc::flags
