#include "orchestrator/flags/emit.hpp"

#include <algorithm>
#include <array>

#include "orchestrator/util/strings.hpp"

namespace orc::flags {

namespace {

using arch::ArchSet;
using arch::ComputeCapability;
using arch::Variant;

std::string joined(const std::vector<std::string>& parts, std::string_view separator) {
  return util::join(parts, separator);
}

// The CCs PyTorch 2.11's torch.utils.cpp_extension accepts in
// TORCH_CUDA_ARCH_LIST (cuda-compat.md 5.2a); anything else is a ValueError
// ("Unknown CUDA arch (X) or GPU not supported").
constexpr std::array k_torch_known{"3.5",  "3.7",  "5.0",   "5.2",  "5.3",   "6.0",  "6.1",   "6.2",  "7.0",
                                   "7.2",  "7.5",  "8.0",   "8.6",  "8.7",   "8.9",  "9.0",   "9.0a", "10.0",
                                   "10.0a", "10.3", "10.3a", "11.0", "11.0a", "12.0", "12.0a", "12.1", "12.1a"};

bool torch_knows(const ComputeCapability& cc) {
  const std::string dotted = cc.dotted();
  return std::ranges::any_of(k_torch_known, [&](std::string_view k) { return k == dotted; });
}

// Caffe's cmake/Cuda.cmake keeps only "[0-9()]+" of each CUDA_ARCH_BIN entry
// (so 'a'/'f' suffixes vanish) and, in the revisions that run
// string(REPLACE "20" "" ...) over the whole list for CUDA >= 9, turns 120 into 1.
bool caffe_cmake_mangles(const ComputeCapability& cc) {
  return cc.variant() != Variant::none || cc.digits().find("20") != std::string::npos;
}

Emitted emit_pytorch(const ArchSet& set, const EmitContext&) {
  Emitted out;
  out.env.push_back({"TORCH_CUDA_ARCH_LIST", torch_cuda_arch_list(set)});
  for (const auto& cc : set.all()) {
    if (cc.variant() == Variant::family) {
      out.warnings.push_back("PyTorch rejects the 'f' suffix in TORCH_CUDA_ARCH_LIST (" + cc.dotted() +
                             "): its extension builder raises ValueError");
    } else if (!torch_knows(cc)) {
      out.warnings.push_back("PyTorch 2.11's extension builder does not know CC " + cc.dotted() +
                             " and raises \"Unknown CUDA arch\"; a newer PyTorch may");
    }
  }
  for (const auto& cc : set.ptx) {
    if (!set.sass.contains(cc))
      out.warnings.push_back("TORCH_CUDA_ARCH_LIST cannot ask for PTX without SASS; " + cc.dotted() +
                             "+PTX also embeds sm_" + cc.digits());
  }
  return out;
}

Emitted emit_tensorflow(const ArchSet& set, const EmitContext& context) {
  Emitted out;
  const std::string caps = tf_compute_capabilities(set);
  out.env.push_back({"TF_NEED_CUDA", "1"});
  out.env.push_back({"TF_CUDA_COMPUTE_CAPABILITIES", caps});
  out.env.push_back({"TF_CUDA_VERSION", context.cuda.truncated(2).str()});
  if (context.cudnn) out.env.push_back({"TF_CUDNN_VERSION", context.cudnn->truncated(1).str()});
  // TF 2.18 moved to hermetic CUDA: the repository rule reads
  // HERMETIC_CUDA_COMPUTE_CAPABILITIES first and TF_CUDA_* only as fallback.
  if (context.framework && *context.framework >= util::Version(2, 18)) {
    out.env.push_back({"HERMETIC_CUDA_COMPUTE_CAPABILITIES", caps});
  }
  for (const auto& cc : set.all()) {
    if (cc.variant() == Variant::family)
      out.warnings.push_back("TensorFlow's configure does not accept the 'f' suffix (" + cc.compute() + ")");
  }
  for (const auto& cc : set.ptx) {
    if (!set.sass.contains(cc))
      out.warnings.push_back("TensorFlow has no PTX-only entry; " + cc.compute() + " also embeds " + cc.sm());
  }
  return out;
}

Emitted emit_caffe(const ArchSet& set, const EmitContext&) {
  return Emitted{.env = {{"CUDA_ARCH", caffe_cuda_arch(set)}}, .warnings = {}};
}

Emitted emit_caffe_cmake(const ArchSet& set, const EmitContext&) {
  Emitted out;
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
  out.env.push_back({"CUDA_ARCH_NAME", "Manual"});
  out.env.push_back({"CUDA_ARCH_BIN", joined(bin, " ")});
  out.env.push_back({"CUDA_ARCH_PTX", joined(ptx, " ")});
  if (!rescued.empty()) {
    // Cuda.cmake appends its own flags to CUDA_NVCC_FLAGS, so targets passed
    // there survive its list mangling.
    out.env.push_back({"CUDA_NVCC_FLAGS", joined(nvcc_gencode(rescued), ";")});
    std::vector<std::string> names = rescued.sass_names();
    for (const auto& n : rescued.ptx_names()) names.push_back(n);
    out.warnings.push_back("Caffe's cmake/Cuda.cmake would mangle " + joined(names, ", ") +
                           " (it strips 'a'/'f' suffixes and, for CUDA >= 9, every \"20\" in the list, so 120 "
                           "becomes 1); those targets are passed in CUDA_NVCC_FLAGS instead");
  }
  return out;
}

Emitted emit_cmake(const ArchSet& set, const EmitContext&) {
  Emitted out;
  const std::string value = cmake_cuda_architectures(set);
  out.env.push_back({"CMAKE_CUDA_ARCHITECTURES", value});
  // CMake 3.20+ initializes CMAKE_CUDA_ARCHITECTURES from this variable.
  out.env.push_back({"CUDAARCHS", value});
  for (const auto& cc : set.all()) {
    if (cc.variant() == Variant::family)
      out.warnings.push_back("CMAKE_CUDA_ARCHITECTURES accepts the 'f' suffix only from CMake 3.31.8 / 4.0.2 (" +
                             cc.digits() + ")");
  }
  return out;
}

Emitted emit_nvcc(const ArchSet& set, const EmitContext&) {
  // nvcc appends NVCC_APPEND_FLAGS to every command line it runs.
  return Emitted{.env = {{"NVCC_APPEND_FLAGS", joined(nvcc_gencode(set), " ")}}, .warnings = {}};
}

constexpr std::array<Emitter, 6> k_emitters{{
    {"pytorch", emit_pytorch},
    {"tensorflow", emit_tensorflow},
    {"caffe", emit_caffe},
    {"caffe-cmake", emit_caffe_cmake},
    {"cmake", emit_cmake},
    {"nvcc", emit_nvcc},
}};

}  // namespace

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

std::span<const Emitter> emitter_table() { return k_emitters; }

const Emitter* find_emitter(std::string_view framework) {
  for (const auto& e : k_emitters)
    if (e.framework == framework) return &e;
  return nullptr;
}

}  // namespace orc::flags
