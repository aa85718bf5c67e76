#pragma once
// What framework releases build with. TensorFlow: each release's tested Linux GPU
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

// Caffe's last releases and the cuDNN their sources compile with:
//   1.0 (BVLC/caffe, 2017): cuDNN 3 to 7. Its CMake refuses cuDNN < 3 and its
//       cudnn_conv_layer.cpp calls cudnnGetConvolutionForwardAlgorithm and
//       CUDNN_CONVOLUTION_FWD_SPECIFY_WORKSPACE_LIMIT, which cuDNN 8 removed
//       ("not declared in this scope", BVLC/caffe#6970).
//   0.17 (NVIDIA/caffe v0.17.4, 2021): cuDNN 6 or later, 8 included
//       (include/caffe/util/cudnn.hpp: "requires CuDNN version 6.0.0 or higher").
// Neither states a CUDA bound: the arch list, the usual breakage on newer
// toolkits, is what orchestrate writes for them.
struct CaffeRelease {
  util::Version version;   // 1.0, 0.17
  std::string_view fork;   // "BVLC/caffe", "NVIDIA/caffe"
  std::string_view cudnn;  // a range: ">=3,<8"
  std::string_view source;
};
std::span<const CaffeRelease> caffe_releases();  // ascending

}  // namespace orc::flags
