#include "orchestrator/flags/tf_releases.hpp"

#include <array>
#include <string>
#include <vector>

#include "orchestrator/flags/table_version.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::flags {

namespace {

constexpr std::string_view k_tested = "tensorflow.org/install/source#gpu (tensorflow/docs source.md @7c365021)";

// Version, CUDA, cuDNN, verbatim from the tested-configurations table
// (docs/sources/issue13-framework-facts.md section 2a).
constexpr auto k_rows = std::to_array<std::array<std::string_view, 3>>({
    {"2.10", "11.2", "8.1"},
    {"2.11", "11.2", "8.1"},
    {"2.12", "11.8", "8.6"},
    {"2.13", "11.8", "8.6"},
    {"2.14", "11.8", "8.7"},
    {"2.15", "12.2", "8.9"},
    {"2.16", "12.3", "8.9"},
    {"2.17", "12.3", "8.9"},
    {"2.18", "12.5", "9.3"},
    {"2.19", "12.5", "9.3"},
    {"2.20", "12.5", "9.3"},
    {"2.21", "12.5", "9.3"},
});

// The keys of CUDA_REDIST_JSON_DICT and CUDNN_REDIST_JSON_DICT in
// rules_ml_toolchain (where the hermetic rules moved from openxla/xla, whose
// copy ends at 12.8.0 / 9.8.0). 11.8 is keyed short, as the dict has it.
constexpr std::string_view k_hermetic_cuda =
    "11.8 12.1.1 12.2.0 12.3.1 12.3.2 12.4.0 12.4.1 12.5.0 12.5.1 12.6.0 12.6.1 12.6.2 12.6.3 12.8.0 12.8.1 12.9.0 "
    "12.9.1 13.0.0 13.0.1 13.0.2";
constexpr std::string_view k_hermetic_cudnn =
    "8.9.4.25 8.9.6 8.9.7.29 9.1.1 9.2.0 9.2.1 9.3.0 9.4.0 9.5.0 9.5.1 9.6.0 9.7.0 9.7.1 9.8.0 9.9.0 9.10.0 9.10.1 "
    "9.10.2 9.11.0 9.12.0 9.13.0 9.14.0 9.15.0 9.15.1 9.16.0";

std::vector<TfRelease> build() {
  std::vector<TfRelease> out;
  for (const auto& [version, cuda, cudnn] : k_rows)
    out.push_back({.version = detail::table_version("TensorFlow table", version, version),
                   .cuda = detail::table_version("TensorFlow table", version, cuda),
                   .cudnn = detail::table_version("TensorFlow table", version, cudnn),
                   .source = k_tested});
  return out;
}

std::optional<util::Version> newest_of_minor(std::string_view keys, const util::Version& minor) {
  std::optional<util::Version> best;
  for (std::string_view word : util::split_words(keys)) {
    const util::Version v = detail::table_version("hermetic versions", word, word);
    if (v.truncated(2) == minor.truncated(2) && (!best || *best < v)) best = v;
  }
  return best;
}

}  // namespace

std::span<const TfRelease> tf_releases() {
  static const std::vector<TfRelease> table = build();
  return table;
}

std::span<const CaffeRelease> caffe_releases() {
  static const std::vector<CaffeRelease> table = {
      {.version = util::Version(0, 17),
       .fork = "NVIDIA/caffe",
       .cudnn = ">=6",
       .source = "NVIDIA/caffe v0.17.4 include/caffe/util/cudnn.hpp"},
      {.version = util::Version(1, 0),
       .fork = "BVLC/caffe",
       .cudnn = ">=3,<8",
       .source = "BVLC/caffe 1.0 cmake/Cuda.cmake; cuDNN 8 removed its calls, BVLC/caffe#6970"},
  };
  return table;
}

std::optional<util::Version> hermetic_cuda_version(const util::Version& minor) {
  return newest_of_minor(k_hermetic_cuda, minor);
}

std::optional<util::Version> hermetic_cudnn_version(const util::Version& minor) {
  return newest_of_minor(k_hermetic_cudnn, minor);
}

}  // namespace orc::flags
