// Where a tier's Slurm jobs go when its configuration says nothing (the
// constraint its GPUs make), what it says overriding that, and the names
// Kubernetes takes.
#include <gtest/gtest.h>

#include "orchestrator/app/cluster/k8s.hpp"
#include "orchestrator/app/cluster/slurm.hpp"

namespace orc::app {
namespace {

recipe::Tier tier_of(std::vector<arch::ComputeCapability> ccs) {
  recipe::Tier t{.name = "t"};
  for (const auto& cc : ccs) t.gpus.push_back(recipe::TierGpu{.name = "x", .cc = cc});
  return t;
}

TEST(SlurmPlacement, TheConstraintComesFromTheTiersGpusAndSmokeJobsAskForOne) {
  const recipe::Tier mixed = tier_of({{9, 0}, {8, 0}, {8, 0}});
  const recipe::TierSlurm build = slurm_placement(mixed, SlurmWork::build);
  EXPECT_EQ(build.constraint, "sm_80|sm_90");
  EXPECT_EQ(build.gres, "");  // a build needs no GPU
  EXPECT_EQ(build.partition, "");
  const recipe::TierSlurm smoke = slurm_placement(mixed, SlurmWork::smoke);
  EXPECT_EQ(smoke.gres, "gpu:1");
  // What the tier says wins; a build still asks for no GPU.
  recipe::Tier placed = tier_of({{9, 0}});
  placed.slurm = recipe::TierSlurm{.partition = "hopper", .constraint = "h100&ib", .gres = "gpu:h100:1",
                                   .account = "a", .qos = "q", .time = "30"};
  EXPECT_EQ(slurm_placement(placed, SlurmWork::smoke).constraint, "h100&ib");
  EXPECT_EQ(slurm_placement(placed, SlurmWork::smoke).gres, "gpu:h100:1");
  EXPECT_EQ(slurm_placement(placed, SlurmWork::build).gres, "");
  EXPECT_EQ(slurm_placement(placed, SlurmWork::build).time, "30");
}

TEST(K8sNames, AreDns1123LabelsAndLongOnesKeepAHash) {
  EXPECT_EQ(k8s_name("orc-build-Vision_Ext-tier.new"), "orc-build-vision-ext-tier-new");
  const std::string longer = k8s_name("orc-smoke-" + std::string(80, 'a') + "-tier");
  EXPECT_LE(longer.size(), 63u);
  EXPECT_NE(longer, k8s_name("orc-smoke-" + std::string(80, 'a') + "-tiers"));
  EXPECT_EQ(k8s_name("--"), "orchestrate");
}

}  // namespace
}  // namespace orc::app
