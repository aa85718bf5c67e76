#pragma once
// CPU references for the smoke kernels (kernels/smoke_kernels.cu), and the
// rounding the GPU does to narrow formats, emulated bit for bit so results
// can be compared tightly.
#include <cstddef>
#include <span>
#include <vector>

namespace orc::smoke {

inline constexpr float k_saxpy_alpha = 2.5f;  // kernels/smoke_kernels.cu
inline constexpr int k_block = 256;           // threads per block of the 1-D kernels

// float -> bfloat16 -> float, round to nearest even (what __float2bfloat16
// and the bf16 fma's .rn rounding do). NaN stays NaN.
float round_bf16(float x);
// float -> fp8 e4m3 -> float, round to nearest even, saturating to +-448
// (what __nv_fp8_e4m3(float) does: __NV_SATFINITE). e4m3 has no infinity;
// subnormals step by 2^-9.
float round_fp8_e4m3(float x);

// out[i] = k_saxpy_alpha * a[i] + b[i]
std::vector<float> saxpy_reference(std::span<const float> a, std::span<const float> b);
// Sum of each run of k_block elements (the last may be short).
std::vector<float> block_sums_reference(std::span<const float> a);
// Sum of each pair of k_block runs: what a cluster of two blocks writes.
std::vector<float> cluster_sums_reference(std::span<const float> a);
// a x b, n x n row-major, accumulated in double.
std::vector<float> matmul_reference(std::span<const float> a, std::span<const float> b, int n);
// round_bf16(round_bf16(a) * round_bf16(b) + 1) with the product and sum
// exact (one rounding, as an fma).
std::vector<float> bf16_fma_reference(std::span<const float> a, std::span<const float> b);
std::vector<float> fp8_reference(std::span<const float> a);

struct Tolerance {
  double abs = 0;  // |got - want| <= abs + rel * |want|
  double rel = 0;
};

struct Comparison {
  std::size_t checked = 0;
  std::size_t wrong = 0;
  double max_error = 0;         // largest |got - want|
  std::size_t first_wrong = 0;  // index; valid when wrong > 0
  float first_got = 0, first_want = 0;
  bool ok() const { return checked > 0 && wrong == 0; }
};

// Element-wise check; a size mismatch counts every missing element as wrong,
// and a NaN on either side is wrong unless both are NaN.
Comparison compare(std::span<const float> got, std::span<const float> want, Tolerance tolerance);

}  // namespace orc::smoke
