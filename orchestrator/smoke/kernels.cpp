#include "orchestrator/smoke/kernels.hpp"

#include <array>
#include <cmath>

namespace orc::smoke {

namespace {

constexpr int k_vector = 1 << 20;  // elements of the 1-D kernels
constexpr int k_cluster_n = 1 << 16;
constexpr int k_matrix = 256;  // n x n matrices
constexpr int k_tile = 16;
constexpr unsigned k_blocks = k_vector / k_block;
constexpr unsigned k_tiles = k_matrix / k_tile;
constexpr std::size_t k_matrix_elements = static_cast<std::size_t>(k_matrix) * k_matrix;

// fp32 fma on the GPU versus a*x+y rounded once from double here.
constexpr Tolerance k_fp32_elementwise{.abs = 1e-6, .rel = 1e-6};
// 256 partial sums in a different order than the double reference.
constexpr Tolerance k_fp32_sums{.abs = 1e-3, .rel = 1e-5};
// Inputs on the k/64 grid make every product and partial sum exact in fp32.
constexpr Tolerance k_exact{.abs = 1e-6, .rel = 0};

std::vector<float> ref_saxpy(const Inputs& in, int) { return saxpy_reference(in.a, in.b); }
std::vector<float> ref_reduce(const Inputs& in, int) { return block_sums_reference(in.a); }
std::vector<float> ref_matmul(const Inputs& in, int n) { return matmul_reference(in.a, in.b, n); }
std::vector<float> ref_bf16(const Inputs& in, int) { return bf16_fma_reference(in.a, in.b); }
std::vector<float> ref_fp8(const Inputs& in, int) { return fp8_reference(in.a); }
std::vector<float> ref_cluster(const Inputs& in, int) { return cluster_sums_reference(in.a); }

const std::array<KernelSpec, 7> k_kernels{{
    {"saxpy",
     "orc_saxpy",
     "out = 2.5 a + b",
     {3, 0},
     k_vector,
     k_vector,
     k_vector,
     {.grid_x = k_blocks, .block_x = k_block},
     InputKind::uniform,
     k_fp32_elementwise,
     ref_saxpy},
    {"reduce",
     "orc_reduce",
     "block sums with __shfl_xor_sync",
     {3, 0},
     k_vector,
     k_vector,
     k_blocks,
     {.grid_x = k_blocks, .block_x = k_block},
     InputKind::uniform,
     k_fp32_sums,
     ref_reduce},
    {"matmul",
     "orc_matmul",
     "256x256 fp32 product, 16x16 shared-memory tiles",
     {3, 0},
     k_matrix,
     k_matrix_elements,
     k_matrix_elements,
     {.grid_x = k_tiles, .grid_y = k_tiles, .block_x = k_tile, .block_y = k_tile},
     InputKind::half_exact,
     k_exact,
     ref_matmul},
    {"wmma",
     "orc_wmma",
     "256x256 product on tensor cores (wmma, fp16 in, fp32 accumulate)",
     {7, 0},
     k_matrix,
     k_matrix_elements,
     k_matrix_elements,
     {.grid_x = k_tiles, .grid_y = k_tiles, .block_x = 32},
     InputKind::half_exact,
     k_exact,
     ref_matmul},
    // One bf16 ulp is 2^-7 relative: the fma rounds once, as the reference does.
    {"bf16",
     "orc_bf16",
     "bf16 fma a*b+1",
     {8, 0},
     k_vector,
     k_vector,
     k_vector,
     {.grid_x = k_blocks, .block_x = k_block},
     InputKind::bf16_exact,
     {.abs = 0, .rel = 1.0 / 128},
     ref_bf16},
    {"fp8",
     "orc_fp8",
     "fp32 -> fp8 e4m3 -> fp32 (round to nearest even, saturating)",
     {8, 9},
     k_vector,
     k_vector,
     k_vector,
     {.grid_x = k_blocks, .block_x = k_block},
     InputKind::wide_range,
     k_exact,
     ref_fp8},
    {"cluster",
     "orc_cluster",
     "clusters of 2 blocks, sums through distributed shared memory",
     {9, 0},
     k_cluster_n,
     k_cluster_n,
     k_cluster_n / (2 * k_block),
     {.grid_x = k_cluster_n / k_block, .block_x = k_block, .cluster_x = 2},
     InputKind::uniform,
     k_fp32_sums,
     ref_cluster},
}};

}  // namespace

std::span<const KernelSpec> kernel_table() { return k_kernels; }

const KernelSpec* find_kernel(std::string_view name) {
  for (const auto& k : k_kernels)
    if (k.name == name) return &k;
  return nullptr;
}

Inputs make_inputs(const KernelSpec& spec, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> grid64(-128, 128);
  std::uniform_int_distribution<int> grid16(-32, 32);
  std::uniform_int_distribution<int> exponent(-12, 9);
  std::uniform_real_distribution<float> mantissa(0.5f, 1.0f);
  std::bernoulli_distribution sign;
  const auto draw = [&]() -> float {
    switch (spec.input_kind) {
      case InputKind::uniform:
        return unit(rng);
      case InputKind::half_exact:
        return static_cast<float>(grid64(rng)) / 64.0f;
      case InputKind::bf16_exact:
        return static_cast<float>(grid16(rng)) / 16.0f;
      case InputKind::wide_range: {
        const float m = std::ldexp(mantissa(rng), exponent(rng));
        return sign(rng) ? -m : m;
      }
    }
    return 0.0f;
  };
  Inputs in;
  in.a.resize(spec.inputs);
  in.b.resize(spec.inputs);
  for (auto& x : in.a) x = draw();
  for (auto& x : in.b) x = draw();
  return in;
}

std::string_view kernel_status_name(KernelStatus s) {
  switch (s) {
    case KernelStatus::passed:
      return "passed";
    case KernelStatus::failed:
      return "failed";
    case KernelStatus::skipped:
      return "skipped";
    case KernelStatus::error:
      return "error";
  }
  return "error";
}

KernelStatus judge_run(int status_word, const Comparison& comparison) {
  if (status_word == k_unsupported) return KernelStatus::skipped;
  // A kernel that ran writes k_ran; anything else means it never ran its
  // code (or the wrong code ran), which is a failure, not a skip.
  if (status_word != k_ran) return KernelStatus::failed;
  return comparison.ok() ? KernelStatus::passed : KernelStatus::failed;
}

}  // namespace orc::smoke
