#pragma once
// The cuDNN table (cuda-compat.md section 4): per release, the CUDA versions
// its builds support and the oldest compute capability it runs on.
#include <span>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::compat {

struct CudaSpan {
  util::Version first;  // inclusive, major.minor
  util::Version last;   // inclusive, major.minor
  bool contains(const util::Version& cuda) const;
};

struct CudnnRelease {
  util::Version version;               // one row per minor release: 8.9, 9.0, ... 9.21
  std::vector<CudaSpan> cuda;          // toolkits its builds support
  arch::ComputeCapability min_cc;      // oldest CC it runs on
  std::vector<std::string_view> unconfirmed;  // fields marked UNCONFIRMED: "cuda", "min_cc"
  std::string_view source;

  bool supports_cuda(const util::Version& cuda) const;
  bool is_unconfirmed(std::string_view field) const;
};

std::span<const CudnnRelease> cudnn_table();  // ascending
const CudnnRelease* find_cudnn(const util::Version& version);  // by major.minor

}  // namespace orc::compat
