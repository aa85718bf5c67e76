#pragma once
// From one ArchSet, every framework's arch variables (cuda-compat.md section 5).
// Emitters never produce `native`, `all` or `ALL`: a plan names its archs.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "orchestrator/arch/arch_set.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::flags {

struct EnvVar {
  std::string name;
  std::string value;
};

// What an emitter may need besides the archs.
struct EmitContext {
  util::Version cuda;                      // the resolved toolkit, 12.8
  std::optional<util::Version> cudnn;      // the resolved cuDNN, when the framework uses it
  std::optional<util::Version> framework;  // lowest framework version the recipe allows, when given
};

// Each framework's variables, typed: the build drivers read these fields
// (never the environment back), and environment() renders them.
struct TorchVars {
  std::string arch_list;  // TORCH_CUDA_ARCH_LIST
};
struct TensorflowVars {
  std::string capabilities;                  // TF_CUDA_COMPUTE_CAPABILITIES (and the hermetic one)
  std::string cuda_version;                  // TF_CUDA_VERSION: major.minor
  std::optional<std::string> cudnn_version;  // TF_CUDNN_VERSION: major
  bool hermetic = false;                     // TF >= 2.18 reads HERMETIC_CUDA_COMPUTE_CAPABILITIES
  // Hermetic builds: the full versions bazel fetches (HERMETIC_CUDA_VERSION
  // 12.5.1, HERMETIC_CUDNN_VERSION 9.3.0); nullopt when the hermetic rules
  // know no release of the plan's minor.
  std::optional<std::string> hermetic_cuda_version;
  std::optional<std::string> hermetic_cudnn_version;
};
struct CaffeVars {
  std::string cuda_arch;  // Makefile.config's CUDA_ARCH
};
struct CaffeCmakeVars {
  std::string bin;                        // CUDA_ARCH_BIN
  std::string ptx;                        // CUDA_ARCH_PTX
  std::optional<std::string> nvcc_flags;  // CUDA_NVCC_FLAGS: the targets Cuda.cmake would mangle
};
struct CmakeVars {
  std::string architectures;  // CMAKE_CUDA_ARCHITECTURES and CUDAARCHS
};
struct NvccVars {
  std::string append_flags;  // NVCC_APPEND_FLAGS
};
using FrameworkVars = std::variant<TorchVars, TensorflowVars, CaffeVars, CaffeCmakeVars, CmakeVars, NvccVars>;

// The variables as the build's environment, in a fixed order.
std::vector<EnvVar> environment(const FrameworkVars& vars);

struct Emitted {
  FrameworkVars vars;
  std::vector<EnvVar> env;            // environment(vars): variables for the build's environment
  std::vector<std::string> warnings;  // what the framework's own parser will do wrong, and what we did about it
};

// PyTorch: "8.0;8.6;8.9;9.0+PTX". A PTX-only CC is written "X.Y+PTX" (PyTorch
// has no PTX-only form) and reported as a warning by the pytorch emitter.
std::string torch_cuda_arch_list(const arch::ArchSet& set);
// TensorFlow: "sm_80,sm_86,compute_90" (compute_XY = SASS and PTX, sm_XY = SASS only).
std::string tf_compute_capabilities(const arch::ArchSet& set);
// The lines the tensorflow build driver appends to the workspace's
// .bazelrc. TensorFlow's own .bazelrc pins HERMETIC_CUDA_VERSION and
// HERMETIC_CUDNN_VERSION with `build:cuda --repo_env=...`, which wins over the
// shell's variables, and `--config=cuda` expands after every plain `build`
// line: so each variable is written for `build` and again for `build:cuda`,
// after TensorFlow's lines, where the later one wins.
std::string tf_bazelrc_fragment(const TensorflowVars& vars);
// CMake: "80-real;86-real;90" (plain = SASS+PTX, -real = SASS, -virtual = PTX).
std::string cmake_cuda_architectures(const arch::ArchSet& set);
// nvcc: one "-gencode=arch=compute_XY,code=sm_XY" per SASS target and one
// "-gencode=arch=compute_XY,code=compute_XY" per PTX target, ascending.
std::vector<std::string> nvcc_gencode(const arch::ArchSet& set);
// Caffe Makefile.config: the CUDA_ARCH value, "-gencode arch=compute_80,code=sm_80 ...".
std::string caffe_cuda_arch(const arch::ArchSet& set);

// The frameworks a recipe may name: the one table that the configuration's
// parser, its validation and "did you mean", the emitters and the build
// drivers read.
enum class Framework { pytorch, tensorflow, caffe, caffe_cmake, cmake, nvcc };

struct FrameworkInfo {
  Framework id;
  std::string_view framework;        // the name recipes use: "caffe-cmake"
  std::string_view requirement_key;  // `requires:` key of its own version ("caffe"); empty = none
  bool uses_cudnn;                   // links cuDNN, so its plans choose a release
  Emitted (*emit)(const arch::ArchSet& set, const EmitContext& context);
};
using Emitter = FrameworkInfo;

std::span<const FrameworkInfo> framework_table();  // in declaration order
const FrameworkInfo& framework_info(Framework framework);
const FrameworkInfo* find_framework(std::string_view name);
std::span<const Emitter> emitter_table();
const Emitter* find_emitter(std::string_view framework);

}  // namespace orc::flags
