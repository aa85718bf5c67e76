// Issue 11: a configuration of very many tiers and recipes is read in time
// linear in its size (bench/run.sh plan_tiers measures it); these check what
// the indexes behind that must keep: duplicates named with both places,
// unknown tiers with a did-you-mean, unused tiers warned in order, a tier
// listed twice by a recipe kept once.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/recipe/test_support.hpp"

namespace orc::recipe {
namespace {

constexpr int k_tiers = 3000;

// "tiers:" then tier t1 .. tN, one a line (tier i on line i + 1).
std::string many_tiers(int n) {
  std::string text = "tiers:\n";
  for (int i = 1; i <= n; ++i) text += "  t" + std::to_string(i) + ": {gpus: [H100]}\n";
  return text;
}

TEST(RecipeScale, DuplicatesAmongManyAreReportedWithBothPlaces) {
  std::string text = many_tiers(k_tiers);
  text += "  t17: {gpus: [A100]}\n  t2999: {gpus: [A100]}\n";  // lines k_tiers + 2 and + 3
  text += "recipes:\n";
  const int recipes_line = k_tiers + 4;
  for (int i = 1; i <= 500; ++i)
    text += "  - {name: r" + std::to_string(i) + ", framework: nvcc, source: {path: s}, tiers: [t1]}\n";
  text += "  - {name: r250, framework: nvcc, source: {path: s}, tiers: [t1]}\n";
  const std::vector<std::string> errors = testing::error_headlines(text);
  EXPECT_EQ(errors, (std::vector<std::string>{"orchestrate: error: t.yaml:" + std::to_string(k_tiers + 2) +
                                                  ":3: duplicate tier 't17' (first declared at line 18)",
                                              "orchestrate: error: t.yaml:" + std::to_string(k_tiers + 3) +
                                                  ":3: duplicate tier 't2999' (first declared at line 3000)",
                                              "orchestrate: error: t.yaml:" + std::to_string(recipes_line + 501) +
                                                  ":5: duplicate recipe name 'r250' (first defined at t.yaml:" +
                                                  std::to_string(recipes_line + 250) + ":5)"}));
}

TEST(RecipeScale, RecipesNamingManyTiersAreCheckedAgainstAll) {
  std::string text = many_tiers(k_tiers) + "recipes:\n  - name: all\n    framework: nvcc\n    source: {path: s}\n";
  text += "    tiers: [";
  for (int i = k_tiers; i >= 1; --i) text += "t" + std::to_string(i) + ", ";
  text += "t1, t2, tt2999]\n";
  // The last name is unknown, the closest declared one suggested; the
  // repeated t1 and t2 are kept once.
  const std::size_t col = text.rfind("tt2999") - text.rfind("    tiers: [") + 1;
  EXPECT_EQ(testing::error_headlines(text),
            std::vector<std::string>{"orchestrate: error: t.yaml:" + std::to_string(k_tiers + 6) + ":" +
                                     std::to_string(col) + ": unknown tier 'tt2999' (did you mean 't2999'?)"});
  text.replace(text.rfind("tt2999"), 6, "t3");
  const Config config = testing::parse_ok(text);
  ASSERT_EQ(config.recipes.size(), 1u);
  ASSERT_EQ(config.recipes[0].tiers.size(), static_cast<std::size_t>(k_tiers));
  EXPECT_EQ(config.recipes[0].tiers.front(), "t" + std::to_string(k_tiers));
  EXPECT_EQ(config.recipes[0].tiers.back(), "t1");
  EXPECT_TRUE(config.warnings.empty());
}

TEST(RecipeScale, UnusedTiersAreWarnedInDeclarationOrder) {
  std::string text = many_tiers(k_tiers) + "recipes:\n";
  // Every tier but the multiples of 1000 is used, by one recipe or another.
  for (int i = 1; i <= k_tiers; ++i)
    if (i % 1000 != 0)
      text += "  - {name: r" + std::to_string(i) + ", framework: nvcc, source: {path: s}, tiers: [t" +
              std::to_string(i) + "]}\n";
  const Config config = testing::parse_ok(text);
  std::vector<std::string> warnings;
  for (const auto& w : config.warnings) warnings.push_back(w.headline());
  EXPECT_EQ(warnings,
            (std::vector<std::string>{"orchestrate: warning: t.yaml:1001:3: tier 't1000' is not used by any recipe",
                                      "orchestrate: warning: t.yaml:2001:3: tier 't2000' is not used by any recipe",
                                      "orchestrate: warning: t.yaml:3001:3: tier 't3000' is not used by any recipe"}));
}

}  // namespace
}  // namespace orc::recipe
