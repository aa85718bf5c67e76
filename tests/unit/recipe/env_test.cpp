// `env:` on tiers and recipes, and a recipe's `nvcc:` policy.
#include <gtest/gtest.h>

#include "tests/unit/recipe/test_support.hpp"

namespace orc::recipe {
namespace {

using testing::error_headlines;
using testing::parse_ok;

TEST(RecipeEnv, TierAndRecipeVariablesAreKeptInOrderWithWhereTheyWereWritten) {
  const auto config = parse_ok(R"(tiers:
  tier-new:
    gpus: ["H100"]
    env: {HTTP_PROXY: "http://proxy:3128"}
recipes:
  - name: ext
    framework: pytorch
    source: {path: src}
    tiers: [tier-new]
    env:
      USE_NINJA: "1"
      BUILD_VERSION: 2.4.1
    nvcc: enforce
)");
  ASSERT_EQ(config.tiers.size(), 1u);
  ASSERT_EQ(config.tiers[0].env.size(), 1u);
  EXPECT_EQ(config.tiers[0].env[0].name, "HTTP_PROXY");
  ASSERT_EQ(config.recipes.size(), 1u);
  const Recipe& r = config.recipes[0];
  ASSERT_EQ(r.env.size(), 2u);
  EXPECT_EQ(r.env[0].name, "USE_NINJA");
  EXPECT_EQ(r.env[1].value, "2.4.1");
  EXPECT_EQ(r.env[1].where.line, 12);
  EXPECT_EQ(r.nvcc, NvccPolicy::enforce);
}

TEST(RecipeEnv, TheDefaultPolicyVerifies) {
  const auto config = parse_ok(R"(tiers: {t: {gpus: ["H100"]}}
recipes: [{name: a, framework: cmake, source: {path: s}, tiers: [t]}]
)");
  ASSERT_EQ(config.recipes.size(), 1u);
  EXPECT_EQ(config.recipes[0].nvcc, NvccPolicy::verify);
}

TEST(RecipeEnv, VariablesThePlanSetsNamesAndPoliciesAreChecked) {
  const auto errors = error_headlines(R"(tiers:
  t:
    gpus: ["H100"]
    env: {"1X": a}
recipes:
  - name: a
    framework: pytorch
    source: {path: s}
    tiers: [t]
    env: {TORCH_CUDA_ARCH_LIST: "8.0", ORCHESTRATE_STORE: x, A: 1, A: 2}
    nvcc: enforced
)");
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_EQ(errors[0],
            "orchestrate: error: t.yaml:4:11: invalid variable name '1X': letters, digits and '_', not starting with "
            "a digit");
  EXPECT_EQ(errors[1],
            "orchestrate: error: t.yaml:10:11: 'TORCH_CUDA_ARCH_LIST' is set by the build from the plan or the "
            "toolkit; a recipe cannot change it (choose archs with tiers, the toolkit with requires: cuda)");
  EXPECT_EQ(errors[2],
            "orchestrate: error: t.yaml:10:40: 'ORCHESTRATE_STORE' configures orchestrate itself, not a build step");
  EXPECT_EQ(errors[3], "orchestrate: error: t.yaml:10:68: duplicate variable 'A'");
  EXPECT_EQ(errors[4],
            "orchestrate: error: t.yaml:11:11: 'nvcc' is verify or enforce, not 'enforced' (did you mean 'enforce'?)");
}

}  // namespace
}  // namespace orc::recipe
