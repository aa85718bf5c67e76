#pragma once
// From one ArchSet, every framework's arch variables (cuda-compat.md section 5).
// Emitters never produce `native`, `all` or `ALL`: a plan names its archs.
#include <optional>
#include <span>
#include <string>
#include <string_view>
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
  util::Version cuda;                       // the resolved toolkit, 12.8
  std::optional<util::Version> cudnn;       // the resolved cuDNN, when the framework uses it
  std::optional<util::Version> framework;   // lowest framework version the recipe allows, when given
};

struct Emitted {
  std::vector<EnvVar> env;            // variables for the build's environment
  std::vector<std::string> warnings;  // what the framework's own parser will do wrong, and what we did about it
};

// PyTorch: "8.0;8.6;8.9;9.0+PTX". A PTX-only CC is written "X.Y+PTX" (PyTorch
// has no PTX-only form) and reported as a warning by the pytorch emitter.
std::string torch_cuda_arch_list(const arch::ArchSet& set);
// TensorFlow: "sm_80,sm_86,compute_90" (compute_XY = SASS and PTX, sm_XY = SASS only).
std::string tf_compute_capabilities(const arch::ArchSet& set);
// CMake: "80-real;86-real;90" (plain = SASS+PTX, -real = SASS, -virtual = PTX).
std::string cmake_cuda_architectures(const arch::ArchSet& set);
// nvcc: one "-gencode=arch=compute_XY,code=sm_XY" per SASS target and one
// "-gencode=arch=compute_XY,code=compute_XY" per PTX target, ascending.
std::vector<std::string> nvcc_gencode(const arch::ArchSet& set);
// Caffe Makefile.config: the CUDA_ARCH value, "-gencode arch=compute_80,code=sm_80 ...".
std::string caffe_cuda_arch(const arch::ArchSet& set);

// One framework's variables. The table of emitters is keyed by the recipe's
// framework name ("pytorch", "tensorflow", "caffe", "caffe-cmake", "cmake", "nvcc").
struct Emitter {
  std::string_view framework;
  Emitted (*emit)(const arch::ArchSet& set, const EmitContext& context);
};
std::span<const Emitter> emitter_table();
const Emitter* find_emitter(std::string_view framework);

}  // namespace orc::flags
