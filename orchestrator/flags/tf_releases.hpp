#pragma once
// What TensorFlow releases build with: each release's tested Linux GPU
// configuration (CUDA and cuDNN, major.minor), and for hermetic CUDA (2.18
// and later) the full versions the hermetic repository rules can fetch,
// which HERMETIC_CUDA_VERSION / HERMETIC_CUDNN_VERSION must name (x.y.z).
#include <optional>
#include <span>
#include <string_view>

#include "orchestrator/util/version.hpp"

namespace orc::flags {

struct TfRelease {
  util::Version version;  // 2.18 (2.16 is listed as 2.16.1, its first GPU row)
  util::Version cuda;     // 12.5
  util::Version cudnn;    // 9.3
  std::string_view source;
};

// Ascending, 2.10 to 2.21: tensorflow.org/install/source#gpu, "Tested build
// configurations", Linux GPU.
std::span<const TfRelease> tf_releases();

// The first release with hermetic CUDA: its build reads HERMETIC_CUDA_VERSION
// and HERMETIC_CUDNN_VERSION (TF_CUDA_VERSION only as their fallback).
inline const util::Version k_tf_hermetic_since{2, 18};

// The newest full version of `minor` (CUDA 12.5 -> 12.5.1, cuDNN 9.3 ->
// 9.3.0) among the keys of the hermetic rules' CUDA_REDIST_JSON_DICT /
// CUDNN_REDIST_JSON_DICT; nullopt when they know none of that minor.
std::optional<util::Version> hermetic_cuda_version(const util::Version& minor);
std::optional<util::Version> hermetic_cudnn_version(const util::Version& minor);
// Where those keys come from, for messages.
inline constexpr std::string_view k_hermetic_source =
    "google-ml-infra/rules_ml_toolchain third_party/gpus/cuda/hermetic/cuda_redist_versions.bzl @141ef829";

}  // namespace orc::flags
