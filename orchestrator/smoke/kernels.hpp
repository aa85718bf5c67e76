#pragma once
// The table of smoke kernels (kernels/smoke_kernels.cu): for each, its
// symbol, the compute capability its real code needs, its launch geometry,
// how its inputs are drawn and its CPU reference. The runner reads only
// this table, so adding a kernel is one row here and one kernel there.
#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/smoke/reference.hpp"

namespace orc::smoke {

// status[0] of a kernel compiled for an arch without its feature.
inline constexpr int k_unsupported = -1;
inline constexpr int k_ran = 1;

// What the inputs must be for the comparison to be tight: values the
// narrow format holds exactly, so the GPU and the CPU round the same way.
enum class InputKind {
  uniform,     // [-1, 1)
  half_exact,  // k/64, |k| <= 128: exact in fp16 and bf16 products sum exactly in fp32
  bf16_exact,  // k/16, |k| <= 32: exact in bf16
  wide_range,  // +-2^e * [0.5, 1), e in [-12, 9]: fp8's subnormals, normals and saturation
};

struct Geometry {
  unsigned grid_x = 1, grid_y = 1;
  unsigned block_x = 1, block_y = 1;
  unsigned cluster_x = 0;  // > 0: launched with this cluster dimension (cuLaunchKernelEx)
};

struct Inputs {
  std::vector<float> a;
  std::vector<float> b;
};

struct KernelSpec {
  std::string_view name;    // "saxpy"
  std::string_view symbol;  // "orc_saxpy"
  std::string_view what;    // one line for reports
  arch::ComputeCapability min_cc;
  int n = 0;                // the kernel's n parameter
  std::size_t inputs = 0;   // elements of a and b
  std::size_t outputs = 0;  // elements of out
  Geometry geometry;
  InputKind input_kind = InputKind::uniform;
  Tolerance tolerance;
  std::vector<float> (*reference)(const Inputs& in, int n) = nullptr;
};

std::span<const KernelSpec> kernel_table();
const KernelSpec* find_kernel(std::string_view name);

// Fresh inputs for one run, drawn from `rng`.
Inputs make_inputs(const KernelSpec& spec, std::mt19937_64& rng);

// How a kernel's run is judged, from what it wrote to its status words.
enum class KernelStatus { passed, failed, skipped, error };
std::string_view kernel_status_name(KernelStatus s);

// The status a finished launch earns: skipped when the kernel said its
// feature was compiled out, failed on a wrong result or a status word the
// kernel never writes, passed otherwise.
KernelStatus judge_run(int status_word, const Comparison& comparison);

}  // namespace orc::smoke
