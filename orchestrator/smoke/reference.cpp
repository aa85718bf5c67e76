#include "orchestrator/smoke/reference.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace orc::smoke {

namespace {

constexpr float k_fp8_e4m3_max = 448.0f;
// Smallest normal e4m3 exponent; below it the spacing stays 2^(-6-3).
constexpr int k_fp8_e4m3_min_exponent = -6;
constexpr int k_fp8_e4m3_mantissa_bits = 3;

std::vector<float> group_sums(std::span<const float> a, std::size_t group) {
  std::vector<float> out((a.size() + group - 1) / group);
  for (std::size_t g = 0; g < out.size(); ++g) {
    double sum = 0;
    for (std::size_t i = g * group; i < std::min(a.size(), (g + 1) * group); ++i) sum += a[i];
    out[g] = static_cast<float>(sum);
  }
  return out;
}

}  // namespace

float round_bf16(float x) {
  if (std::isnan(x)) return x;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  // Round to nearest even on the 16 bits that are dropped.
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

float round_fp8_e4m3(float x) {
  if (std::isnan(x)) return x;
  const float magnitude = std::fabs(x);
  if (magnitude >= k_fp8_e4m3_max) return std::copysign(k_fp8_e4m3_max, x);
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
  const int scale = std::max(exponent - 1, k_fp8_e4m3_min_exponent) - k_fp8_e4m3_mantissa_bits;
  // Dividing by a power of two is exact; nearbyint rounds half to even.
  float rounded = std::ldexp(std::nearbyint(std::ldexp(magnitude, -scale)), scale);
  rounded = std::min(rounded, k_fp8_e4m3_max);
  return std::copysign(rounded, x);
}

std::vector<float> saxpy_reference(std::span<const float> a, std::span<const float> b) {
  std::vector<float> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    out[i] = static_cast<float>(static_cast<double>(k_saxpy_alpha) * a[i] + b[i]);
  return out;
}

std::vector<float> block_sums_reference(std::span<const float> a) { return group_sums(a, k_block); }

std::vector<float> cluster_sums_reference(std::span<const float> a) { return group_sums(a, 2 * k_block); }

std::vector<float> matmul_reference(std::span<const float> a, std::span<const float> b, int n) {
  const auto size = static_cast<std::size_t>(n);
  std::vector<float> out(size * size);
  for (std::size_t r = 0; r < size; ++r)
    for (std::size_t c = 0; c < size; ++c) {
      double sum = 0;
      for (std::size_t k = 0; k < size; ++k) sum += static_cast<double>(a[r * size + k]) * b[k * size + c];
      out[r * size + c] = static_cast<float>(sum);
    }
  return out;
}

std::vector<float> bf16_fma_reference(std::span<const float> a, std::span<const float> b) {
  std::vector<float> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double exact = static_cast<double>(round_bf16(a[i])) * round_bf16(b[i]) + 1.0;
    // A bf16 product has at most 16 significant bits, so `exact` is exact as
    // a double and rounding it through float first cannot double-round for
    // the inputs the runner draws (kernels.cpp keeps them on a coarse grid).
    out[i] = round_bf16(static_cast<float>(exact));
  }
  return out;
}

std::vector<float> fp8_reference(std::span<const float> a) {
  std::vector<float> out(a.size());
  std::ranges::transform(a, out.begin(), round_fp8_e4m3);
  return out;
}

Comparison compare(std::span<const float> got, std::span<const float> want, Tolerance tolerance) {
  Comparison c;
  c.checked = want.size();
  for (std::size_t i = 0; i < want.size(); ++i) {
    bool bad = false;
    double error = 0;
    if (i >= got.size()) {
      bad = true;
    } else if (std::isnan(got[i]) || std::isnan(want[i])) {
      bad = std::isnan(got[i]) != std::isnan(want[i]);
    } else {
      error = std::fabs(static_cast<double>(got[i]) - want[i]);
      bad = !(error <= tolerance.abs + tolerance.rel * std::fabs(static_cast<double>(want[i])));
      c.max_error = std::max(c.max_error, error);
    }
    if (bad && c.wrong++ == 0) {
      c.first_wrong = i;
      c.first_got = i < got.size() ? got[i] : std::nanf("");
      c.first_want = want[i];
    }
  }
  return c;
}

}  // namespace orc::smoke
