// The runtime rules of cuda-compat.md 6.2 as a user meets them, pinned to
// what an H200 (CC 9.0) really did (cuda-compat.md 6.1): the GPU smoke-test
// issue re-checks these on the GPU.
#include "orchestrator/inspect/verdict.hpp"

#include <gtest/gtest.h>

#include <set>

namespace orc::inspect {
namespace {

using arch::ComputeCapability;
using arch::Variant;
using Set = std::set<ComputeCapability>;

const ComputeCapability k_h200{9, 0};
const ComputeCapability k_a = {9, 0, Variant::arch_specific};

TEST(Verdict, Sm80OnlyFailsOnH200WithError209AndTheFix) {
  const Verdict v = judge(Set{{8, 0}}, Set{}, k_h200);
  EXPECT_EQ(v.outcome, Outcome::none);
  EXPECT_FALSE(v.decided_by.has_value());
  EXPECT_NE(v.detail.find("no SASS for 9.0 and no PTX at or below it"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("\"no kernel image is available\" (error 209)"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("SASS never crosses a major version"), std::string::npos) << v.detail;
  EXPECT_TRUE(v.detail.ends_with("; add sm_90 or compute_90")) << v.detail;
}

// A JIT verdict says what is known, and no figure the tool did not measure.
TEST(Verdict, Compute80PtxRunsByJitOnH200WithWhatIsKnown) {
  const Verdict v = judge(Set{}, Set{{8, 0}}, k_h200);
  EXPECT_EQ(v.outcome, Outcome::jit);
  ASSERT_TRUE(v.decided_by.has_value());
  EXPECT_EQ(*v.decided_by, (ComputeCapability{8, 0}));
  EXPECT_EQ(v.detail,
            "runs by JIT of compute_80 PTX: the driver compiles it for this GPU when the module is first loaded "
            "(`orchestrate smoke --artifact` measures how long on a node) and caches the result per user "
            "(~/.nv/ComputeCache); sm_90 SASS would load without it");
  EXPECT_EQ(v.detail.find('%'), std::string::npos);
}

TEST(Verdict, Sm90AndSm90aRunNativelyOnH200) {
  Verdict v = judge(Set{{9, 0}}, Set{}, k_h200);
  EXPECT_EQ(v.outcome, Outcome::native);
  EXPECT_EQ(v.detail, "runs natively from sm_90 SASS");
  v = judge(Set{k_a}, Set{}, k_h200);
  EXPECT_EQ(v.outcome, Outcome::native);
  EXPECT_EQ(*v.decided_by, k_a);
  // compute_90a PTX runs too (exact arch), by JIT.
  EXPECT_EQ(judge(Set{}, Set{k_a}, k_h200).outcome, Outcome::jit);
}

TEST(Verdict, Sm90aRunsOnlyOnExactly90) {
  for (const ComputeCapability dev : {ComputeCapability{10, 0}, ComputeCapability{12, 0}}) {
    const Verdict v = judge(Set{k_a}, Set{}, dev);
    EXPECT_EQ(v.outcome, Outcome::none) << dev.dotted();
    EXPECT_NE(v.detail.find("'a' cubins load only on exactly their own compute capability"), std::string::npos)
        << v.detail;
  }
}

TEST(Verdict, Compute120PtxFailsOnH200) {
  const Verdict v = judge(Set{}, Set{{12, 0}}, k_h200);
  EXPECT_EQ(v.outcome, Outcome::none);
  EXPECT_NE(v.detail.find("compute_120: PTX JIT-compiles only for a GPU at or above its compute capability"),
            std::string::npos)
      << v.detail;
}

TEST(Verdict, Sm86RunsNativelyOn89) {
  const Verdict v = judge(Set{{8, 6}}, Set{}, {8, 9});
  EXPECT_EQ(v.outcome, Outcome::native);
  EXPECT_EQ(*v.decided_by, (ComputeCapability{8, 6}));
  // ...but not the other way round.
  EXPECT_EQ(judge(Set{{8, 9}}, Set{}, {8, 6}).outcome, Outcome::none);
}

TEST(Verdict, FamilyCubinRunsInsideItsFamily) {
  const ComputeCapability f{10, 0, Variant::family};
  EXPECT_EQ(judge(Set{f}, Set{}, {10, 3}).outcome, Outcome::native);
  EXPECT_EQ(judge(Set{f}, Set{}, {12, 0}).outcome, Outcome::none);
  EXPECT_EQ(judge(Set{}, Set{f}, {10, 3}).outcome, Outcome::jit);
  EXPECT_EQ(judge(Set{}, Set{f}, {12, 0}).outcome, Outcome::none);
}

TEST(Verdict, Compute90aPtxDoesNotRunOn100) {
  const Verdict v = judge(Set{}, Set{k_a}, {10, 0});
  EXPECT_EQ(v.outcome, Outcome::none);
  EXPECT_TRUE(v.detail.ends_with("add sm_100 or compute_100")) << v.detail;
}

TEST(Verdict, HighestLoadableCubinAndPtxDecide) {
  // SASS beats PTX; among cubins the highest that loads; among PTX the
  // highest at or below the device.
  EXPECT_EQ(*judge(Set{{8, 0}, {8, 6}, {9, 0}}, Set{{9, 0}}, {8, 9}).decided_by, (ComputeCapability{8, 6}));
  EXPECT_EQ(judge(Set{{9, 0}}, Set{{9, 0}}, k_h200).outcome, Outcome::native);
  EXPECT_EQ(*judge(Set{{8, 0}}, Set{{7, 5}, {8, 0}, {12, 0}}, k_h200).decided_by, (ComputeCapability{8, 0}));
}

TEST(Verdict, NoDeviceCodeAtAll) {
  const Verdict v = judge(Set{}, Set{}, k_h200);
  EXPECT_EQ(v.outcome, Outcome::none);
  EXPECT_NE(v.detail.find("no device code"), std::string::npos);
}

TEST(Verdict, OutcomeNames) {
  EXPECT_EQ(outcome_name(Outcome::native), "native");
  EXPECT_EQ(outcome_name(Outcome::jit), "jit");
  EXPECT_EQ(outcome_name(Outcome::none), "none");
}

}  // namespace
}  // namespace orc::inspect
