// `needs:`: the CUDA libraries a recipe links, named from compat's part
// table, with the errors pinned byte for byte.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/recipe/test_support.hpp"

namespace orc::recipe {
namespace {

using testing::error_headlines;
using Lines = std::vector<std::string>;

std::string with_needs(const std::string& needs) {
  return "tiers:\n  t:\n    gpus: [\"H100\"]\nrecipes:\n  - name: a\n    framework: cmake\n    source: {path: src}\n"
         "    tiers: [t]\n    needs: " +
         needs + "\n";
}

TEST(RecipeNeeds, NamesBecomeTypedPartsWithWhereTheyWereWritten) {
  const auto config = parse_config(with_needs("[cublas, nccl, cublasLt]"), "t.yaml");
  ASSERT_TRUE(config.has_value());
  const auto& needs = config->recipes.at(0).needs;
  ASSERT_EQ(needs.size(), 3u);
  EXPECT_EQ(needs[0].part, compat::ToolkitPart::cublas);
  EXPECT_EQ(needs[1].part, compat::ToolkitPart::nccl);
  EXPECT_EQ(needs[2].part, compat::ToolkitPart::cublasLt);
  EXPECT_EQ(needs[1].where.file, "t.yaml");
  EXPECT_EQ(needs[1].where.line, 9);
  EXPECT_EQ(needs[1].where.col, 21);
}

TEST(RecipeNeeds, NoNeedsIsNone) {
  const auto config = parse_config(with_needs("[]"), "t.yaml");
  ASSERT_TRUE(config.has_value());
  EXPECT_TRUE(config->recipes.at(0).needs.empty());
}

TEST(RecipeNeeds, ATypoSuggestsTheLibraryAndAnUnknownNameListsThem) {
  EXPECT_EQ(error_headlines(with_needs("[cublsa]")),
            (Lines{"orchestrate: error: t.yaml:9:13: unknown CUDA library 'cublsa' (did you mean 'cublas'?)"}));
  EXPECT_EQ(error_headlines(with_needs("[tensorrt]")),
            (Lines{"orchestrate: error: t.yaml:9:13: unknown CUDA library 'tensorrt' (known: cublas cublasLt "
                   "cufft curand cusparse cusolver npp nvjpeg nvrtc nvjitlink cupti cudnn nccl)"}));
}

TEST(RecipeNeeds, TwiceWhatEveryBuildHasAndNotAListAreErrors) {
  EXPECT_EQ(error_headlines(with_needs("[nccl, nccl, cudart]")),
            (Lines{"orchestrate: error: t.yaml:9:19: duplicate library 'nccl' in 'needs'",
                   "orchestrate: error: t.yaml:9:25: 'cudart' need not be listed: every build needs it, and every "
                   "toolkit planned has it"}));
  EXPECT_EQ(error_headlines(with_needs("cublas")).size(), 1u);
  EXPECT_EQ(error_headlines(with_needs("{cublas: 1}")).size(), 1u);
}

}  // namespace
}  // namespace orc::recipe
