#include <gtest/gtest.h>

#include "orchestrator/app/smoke/smoke.hpp"

namespace orc::app {
namespace {

// The configuration `smoke TIER` builds kernels/ with: the user's tier alone
// and the smoke-kernels recipe, valid as the user's own files are.
TEST(SmokeConfig, DerivedConfigurationKeepsTheTierAndAddsTheRecipe) {
  const auto config = recipe::load_config(ORC_SOURCE_DIR "/recipes/orchestrate.yaml");
  ASSERT_TRUE(config.has_value());
  const recipe::Tier& tier = *config->find_tier("tier-new");
  const std::string yaml = smoke_config_yaml(*config, tier, ORC_SOURCE_DIR "/kernels");
  const auto derived = recipe::parse_config(yaml, "/tmp/smoke.yaml");
  ASSERT_TRUE(derived.has_value()) << yaml << derived.error().front().render();
  ASSERT_EQ(derived->tiers.size(), 1u);
  ASSERT_EQ(derived->tiers[0].gpus.size(), tier.gpus.size());
  for (std::size_t i = 0; i < tier.gpus.size(); ++i) EXPECT_EQ(derived->tiers[0].gpus[i].cc, tier.gpus[i].cc);
  EXPECT_EQ(derived->tiers[0].ptx, tier.ptx);
  EXPECT_EQ(derived->tiers[0].driver, tier.driver);
  EXPECT_EQ(derived->toolkits, config->toolkits);
  const recipe::Recipe* r = derived->find_recipe(k_smoke_recipe);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->framework, recipe::Framework::nvcc);
  EXPECT_EQ(r->source.path, std::filesystem::path(ORC_SOURCE_DIR "/kernels"));
  EXPECT_EQ(r->artifacts, (std::vector<std::string>{"smoke_kernels.fatbin"}));
}

}  // namespace
}  // namespace orc::app
