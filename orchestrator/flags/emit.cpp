#include "orchestrator/flags/emit.hpp"

#include <algorithm>
#include <array>

#include "orchestrator/flags/tf_releases.hpp"
#include "orchestrator/flags/torch_releases.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::flags {

namespace {

using arch::ArchSet;
using arch::ComputeCapability;
using arch::Variant;

std::string joined(const std::vector<std::string>& parts, std::string_view separator) {
  return util::join(parts, separator);
}

// The PyTorch release whose extension builder the build meets: the recipe's
// oldest allowed release when the tables have its row, else the newest row
// (2.11). Anything outside its TORCH_CUDA_ARCH_LIST is a ValueError
// ("Unknown CUDA arch (X) or GPU not supported").
const TorchRelease& torch_release_for(const EmitContext& context) {
  if (context.framework)
    if (const TorchRelease* r = find_torch_release(*context.framework)) return *r;
  return torch_releases().back();
}

// Caffe's cmake/Cuda.cmake keeps only "[0-9()]+" of each CUDA_ARCH_BIN entry
// (so 'a'/'f' suffixes vanish) and, in the revisions that run
// string(REPLACE "20" "" ...) over the whole list for CUDA >= 9, turns 120 into 1.
bool caffe_cmake_mangles(const ComputeCapability& cc) {
  return cc.variant() != Variant::none || cc.digits().find("20") != std::string::npos;
}

Emitted with_env(Emitted out) {
  out.env = environment(out.vars);
  return out;
}

Emitted emit_pytorch(const ArchSet& set, const EmitContext& context) {
  Emitted out{.vars = TorchVars{.arch_list = torch_cuda_arch_list(set)}, .env = {}, .warnings = {}};
  const TorchRelease& release = torch_release_for(context);
  for (const auto& cc : set.all()) {
    if (cc.variant() == Variant::family) {
      out.warnings.push_back("PyTorch rejects the 'f' suffix in TORCH_CUDA_ARCH_LIST (" + cc.dotted() +
                             "): its extension builder raises ValueError");
    } else if (std::ranges::find(release.accepted, cc) == release.accepted.end()) {
      out.warnings.push_back("PyTorch " + release.version.str() + "'s extension builder does not know CC " +
                             cc.dotted() + " and raises \"Unknown CUDA arch\"; a newer PyTorch may");
    }
  }
  for (const auto& cc : set.ptx) {
    if (!set.sass.contains(cc))
      out.warnings.push_back("TORCH_CUDA_ARCH_LIST cannot ask for PTX without SASS; " + cc.dotted() +
                             "+PTX also embeds sm_" + cc.digits());
  }
  return with_env(std::move(out));
}

Emitted emit_tensorflow(const ArchSet& set, const EmitContext& context) {
  TensorflowVars vars{.capabilities = tf_compute_capabilities(set),
                      .cuda_version = context.cuda.truncated(2).str(),
                      .cudnn_version = std::nullopt,
                      // TF 2.18 moved to hermetic CUDA: the repository rule reads
                      // HERMETIC_CUDA_COMPUTE_CAPABILITIES first and TF_CUDA_* only as fallback.
                      .hermetic = context.framework && *context.framework >= util::Version(2, 18)};
  if (context.cudnn) vars.cudnn_version = context.cudnn->truncated(1).str();
  std::vector<std::string> warnings;
  if (vars.hermetic) {
    if (auto full = hermetic_cuda_version(context.cuda))
      vars.hermetic_cuda_version = full->str();
    else
      warnings.push_back("the hermetic CUDA rules know no CUDA " + context.cuda.truncated(2).str() + " release (" +
                         std::string(k_hermetic_source) + "): HERMETIC_CUDA_VERSION is left to TensorFlow's default");
    if (context.cudnn) {
      if (auto full = hermetic_cudnn_version(*context.cudnn))
        vars.hermetic_cudnn_version = full->str();
      else
        warnings.push_back("the hermetic CUDA rules know no cuDNN " + context.cudnn->truncated(2).str() +
                           " release: HERMETIC_CUDNN_VERSION is left to TensorFlow's default");
    }
  }
  Emitted out{.vars = std::move(vars), .env = {}, .warnings = std::move(warnings)};
  for (const auto& cc : set.all()) {
    if (cc.variant() == Variant::family)
      out.warnings.push_back("TensorFlow's configure does not accept the 'f' suffix (" + cc.compute() + ")");
  }
  for (const auto& cc : set.ptx) {
    if (!set.sass.contains(cc))
      out.warnings.push_back("TensorFlow has no PTX-only entry; " + cc.compute() + " also embeds " + cc.sm());
  }
  return with_env(std::move(out));
}

Emitted emit_caffe(const ArchSet& set, const EmitContext&) {
  return with_env(Emitted{.vars = CaffeVars{.cuda_arch = caffe_cuda_arch(set)}, .env = {}, .warnings = {}});
}

Emitted emit_caffe_cmake(const ArchSet& set, const EmitContext&) {
  Emitted out;
  CaffeCmakeVars vars;
  std::vector<std::string> bin, ptx;
  ArchSet rescued;
  for (const auto& cc : set.sass) {
    if (caffe_cmake_mangles(cc)) {
      rescued.sass.insert(cc);
    } else {
      bin.push_back(cc.digits());
    }
  }
  for (const auto& cc : set.ptx) {
    if (caffe_cmake_mangles(cc)) {
      rescued.ptx.insert(cc);
    } else {
      ptx.push_back(cc.digits());
    }
  }
  vars.bin = joined(bin, " ");
  vars.ptx = joined(ptx, " ");
  if (!rescued.empty()) {
    // Cuda.cmake appends its own flags to CUDA_NVCC_FLAGS, so targets passed
    // there survive its list mangling.
    vars.nvcc_flags = joined(nvcc_gencode(rescued), ";");
    std::vector<std::string> names = rescued.sass_names();
    for (const auto& n : rescued.ptx_names()) names.push_back(n);
    out.warnings.push_back("Caffe's cmake/Cuda.cmake would mangle " + joined(names, ", ") +
                           " (it strips 'a'/'f' suffixes and, for CUDA >= 9, every \"20\" in the list, so 120 "
                           "becomes 1); those targets are passed in CUDA_NVCC_FLAGS instead");
  }
  out.vars = std::move(vars);
  return with_env(std::move(out));
}

Emitted emit_cmake(const ArchSet& set, const EmitContext&) {
  Emitted out{.vars = CmakeVars{.architectures = cmake_cuda_architectures(set)}, .env = {}, .warnings = {}};
  for (const auto& cc : set.all()) {
    if (cc.variant() == Variant::family)
      out.warnings.push_back("CMAKE_CUDA_ARCHITECTURES accepts the 'f' suffix only from CMake 3.31.8 / 4.0.2 (" +
                             cc.digits() + ")");
  }
  return with_env(std::move(out));
}

Emitted emit_nvcc(const ArchSet& set, const EmitContext&) {
  return with_env(Emitted{.vars = NvccVars{.append_flags = joined(nvcc_gencode(set), " ")}, .env = {}, .warnings = {}});
}

// A Caffe built with CMake is still Caffe: both take `requires: {caffe: ...}`.
constexpr std::array<FrameworkInfo, 6> k_frameworks{{
    {Framework::pytorch, "pytorch", "pytorch", true, emit_pytorch},
    {Framework::tensorflow, "tensorflow", "tensorflow", true, emit_tensorflow},
    {Framework::caffe, "caffe", "caffe", true, emit_caffe},
    {Framework::caffe_cmake, "caffe-cmake", "caffe", true, emit_caffe_cmake},
    {Framework::cmake, "cmake", "", false, emit_cmake},
    {Framework::nvcc, "nvcc", "", false, emit_nvcc},
}};

struct EnvOf {
  std::vector<EnvVar> operator()(const TorchVars& v) const { return {{"TORCH_CUDA_ARCH_LIST", v.arch_list}}; }
  std::vector<EnvVar> operator()(const TensorflowVars& v) const {
    std::vector<EnvVar> env = {
        {"TF_NEED_CUDA", "1"}, {"TF_CUDA_COMPUTE_CAPABILITIES", v.capabilities}, {"TF_CUDA_VERSION", v.cuda_version}};
    if (v.cudnn_version) env.push_back({"TF_CUDNN_VERSION", *v.cudnn_version});
    if (v.hermetic) env.push_back({"HERMETIC_CUDA_COMPUTE_CAPABILITIES", v.capabilities});
    if (v.hermetic_cuda_version) env.push_back({"HERMETIC_CUDA_VERSION", *v.hermetic_cuda_version});
    if (v.hermetic_cudnn_version) env.push_back({"HERMETIC_CUDNN_VERSION", *v.hermetic_cudnn_version});
    return env;
  }
  std::vector<EnvVar> operator()(const CaffeVars& v) const { return {{"CUDA_ARCH", v.cuda_arch}}; }
  std::vector<EnvVar> operator()(const CaffeCmakeVars& v) const {
    std::vector<EnvVar> env = {{"CUDA_ARCH_NAME", "Manual"}, {"CUDA_ARCH_BIN", v.bin}, {"CUDA_ARCH_PTX", v.ptx}};
    if (v.nvcc_flags) env.push_back({"CUDA_NVCC_FLAGS", *v.nvcc_flags});
    return env;
  }
  // CMake 3.20+ initializes CMAKE_CUDA_ARCHITECTURES from CUDAARCHS.
  std::vector<EnvVar> operator()(const CmakeVars& v) const {
    return {{"CMAKE_CUDA_ARCHITECTURES", v.architectures}, {"CUDAARCHS", v.architectures}};
  }
  // nvcc appends NVCC_APPEND_FLAGS to every command line it runs.
  std::vector<EnvVar> operator()(const NvccVars& v) const { return {{"NVCC_APPEND_FLAGS", v.append_flags}}; }
};

}  // namespace

std::vector<EnvVar> environment(const FrameworkVars& vars) { return std::visit(EnvOf{}, vars); }

std::string tf_bazelrc_fragment(const TensorflowVars& vars) {
  std::string out =
      "\n# Written by orchestrate from the tier's plan: bazel fetches and builds for what the plan chose.\n";
  for (const auto& [name, value] : environment(vars)) {
    if (name == "TF_NEED_CUDA") continue;
    for (std::string_view command : {"build", "build:cuda"})
      out += std::string(command) + " --repo_env=" + name + "=" + value + "\n";
  }
  return out;
}

std::string torch_cuda_arch_list(const ArchSet& set) {
  std::vector<std::string> parts;
  for (const auto& cc : set.all()) parts.push_back(cc.dotted() + (set.ptx.contains(cc) ? "+PTX" : ""));
  return joined(parts, ";");
}

std::string tf_compute_capabilities(const ArchSet& set) {
  std::vector<std::string> parts;
  for (const auto& cc : set.all()) parts.push_back(set.ptx.contains(cc) ? cc.compute() : cc.sm());
  return joined(parts, ",");
}

std::string cmake_cuda_architectures(const ArchSet& set) {
  std::vector<std::string> parts;
  for (const auto& cc : set.all()) {
    const bool sass = set.sass.contains(cc), ptx = set.ptx.contains(cc);
    parts.push_back(cc.digits() + (sass && ptx ? "" : sass ? "-real" : "-virtual"));
  }
  return joined(parts, ";");
}

std::vector<std::string> nvcc_gencode(const ArchSet& set) {
  std::vector<std::string> out;
  for (const auto& cc : set.all()) {
    if (set.sass.contains(cc)) out.push_back("-gencode=arch=" + cc.compute() + ",code=" + cc.sm());
    if (set.ptx.contains(cc)) out.push_back("-gencode=arch=" + cc.compute() + ",code=" + cc.compute());
  }
  return out;
}

std::string caffe_cuda_arch(const ArchSet& set) {
  std::vector<std::string> parts;
  for (const auto& cc : set.all()) {
    if (set.sass.contains(cc)) parts.push_back("-gencode arch=" + cc.compute() + ",code=" + cc.sm());
    if (set.ptx.contains(cc)) parts.push_back("-gencode arch=" + cc.compute() + ",code=" + cc.compute());
  }
  return joined(parts, " ");
}

std::span<const FrameworkInfo> framework_table() { return k_frameworks; }

const FrameworkInfo& framework_info(Framework framework) {
  for (const auto& f : k_frameworks)
    if (f.id == framework) return f;
  return k_frameworks.front();  // unreachable: every enumerator has a row
}

const FrameworkInfo* find_framework(std::string_view name) {
  for (const auto& f : k_frameworks)
    if (f.framework == name) return &f;
  return nullptr;
}

std::span<const Emitter> emitter_table() { return k_frameworks; }
const Emitter* find_emitter(std::string_view framework) { return find_framework(framework); }

}  // namespace orc::flags
