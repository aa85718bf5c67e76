// The tier a set records for itself (built_for), as a node without the
// configuration judges the set against it.
#include "orchestrator/site/arch_coverage.hpp"

#include <gtest/gtest.h>

namespace orc::site {
namespace {

cache::Manifest set_with(std::vector<std::string> sass, std::vector<std::string> ptx) {
  cache::Manifest m{.recipe = "saxpy", .tier = "tier-new"};
  m.files.push_back({.path = "bin/saxpy",
                     .embedded_sass = arch::ArchList(std::move(sass)),
                     .embedded_ptx = arch::ArchList(std::move(ptx))});
  return m;
}

TEST(BuiltForTier, TheRecordedGpusJudgeTheSetAsTheConfigurationWould) {
  cache::Manifest m = set_with({"sm_80"}, {});
  m.built_for = cache::BuiltFor{.gpus = {{.name = "A100", .cc = "8.0"}, {.name = "H100", .cc = "9.0"}}, .ptx = "none"};
  const auto tier = built_for_tier(m);
  ASSERT_TRUE(tier);
  EXPECT_EQ(tier->name, "tier-new");
  ASSERT_EQ(tier->gpus.size(), 2u);
  EXPECT_EQ(tier->gpus[1].label(), "H100 (9.0)");
  const ArchCoverage refused = check_arch_coverage(m, *tier);
  EXPECT_FALSE(refused.ok);
  ASSERT_EQ(refused.problems.size(), 1u);
  EXPECT_EQ(refused.problems[0],
            "bin/saxpy: no kernel image for H100 (9.0) of tier 'tier-new' (needs sm_90 SASS or PTX at or below "
            "compute_90)");

  m.files[0].embedded_ptx = {"compute_80"};
  m.built_for->ptx = "highest";
  const ArchCoverage jit = check_arch_coverage(m, *built_for_tier(m));
  EXPECT_TRUE(jit.ok);
  EXPECT_EQ(jit.jit.size(), 1u);
}

TEST(BuiltForTier, ASetWithoutTheRecordOrWithACcThisVersionLacksHasNone) {
  std::string why;
  EXPECT_FALSE(built_for_tier(set_with({"sm_90"}, {}), &why));
  EXPECT_EQ(why, "its manifest does not record the tier's GPUs (a set built before they were recorded)");
  cache::Manifest m = set_with({"sm_90"}, {});
  m.built_for = cache::BuiltFor{.gpus = {{.name = "X", .cc = "99.9.9"}}, .ptx = "highest"};
  EXPECT_FALSE(built_for_tier(m, &why));
  EXPECT_EQ(why, "its manifest records a GPU of CC '99.9.9', which this version cannot read");
  m.built_for->gpus = {{.name = "", .cc = "8.6"}};
  const auto tier = built_for_tier(m);
  ASSERT_TRUE(tier);
  EXPECT_EQ(tier->gpus[0].label(), "CC 8.6");
}

TEST(ArchCoverage, ATargetThisVersionCannotReadIsSaidNeverDropped) {
  recipe::Tier tier;
  tier.name = "tier-new";
  recipe::TierGpu h100;
  h100.name = "H100";
  h100.cc = arch::ComputeCapability(9, 0);
  tier.gpus.push_back(h100);
  tier.ptx = recipe::PtxPolicy::none;
  // A newer version recorded a target beside the one that covers the tier.
  const ArchCoverage covered = check_arch_coverage(set_with({"sm_90", "sm_130x"}, {}), tier);
  EXPECT_TRUE(covered.ok);
  ASSERT_EQ(covered.unread.size(), 1u);
  EXPECT_EQ(covered.unread[0], "bin/saxpy: 'sm_130x' is a target this version cannot read; it vouches for no GPU");
  EXPECT_TRUE(covered.problems.empty());
  // Where only the unread target could cover the tier, the refusal names it.
  const ArchCoverage refused = check_arch_coverage(set_with({"sm_80"}, {"compute_130x"}), tier);
  EXPECT_FALSE(refused.ok);
  ASSERT_EQ(refused.problems.size(), 2u);
  EXPECT_EQ(refused.problems[1],
            "bin/saxpy: 'compute_130x' is a target this version cannot read; it vouches for no GPU");
}

}  // namespace
}  // namespace orc::site
