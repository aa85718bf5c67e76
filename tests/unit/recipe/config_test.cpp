// What a valid configuration turns into: tiers resolved to compute
// capabilities, recipes with absolute paths, argv steps and requirements.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/unit/recipe/test_support.hpp"

namespace orc::recipe {
namespace {

using testing::parse_ok;
using testing::TempDir;

std::vector<std::string> names(const std::vector<Recipe>& recipes) {
  std::vector<std::string> out;
  for (const auto& r : recipes) out.push_back(r.name);
  return out;
}

std::vector<std::string> gpu_ccs(const Tier& tier) {
  std::vector<std::string> out;
  for (const auto& g : tier.gpus) out.push_back(g.name + "=" + g.cc.dotted());
  return out;
}

// Every diagnostic of a failed load, for the assertion message.
template <class Result>
std::string rendered(const Result& result) {
  std::string all;
  if (!result)
    for (const auto& d : result.error()) all += d.render();
  return all;
}

TEST(RecipeConfig, TheExampleConfigurationLoadsCleanly) {
  const std::filesystem::path file = ORC_SOURCE_DIR "/recipes/orchestrate.yaml";
  const auto result = load_config(file);
  ASSERT_TRUE(result.has_value()) << rendered(result);
  const Config& config = *result;
  EXPECT_TRUE(config.warnings.empty()) << config.warnings.front().headline();
  EXPECT_EQ(config.file, file);

  std::vector<std::string> toolkits;
  for (const auto& v : config.toolkits) toolkits.push_back(v.str());
  EXPECT_EQ(toolkits, (std::vector<std::string>{"11.8", "12.4", "12.8", "13.0"}));

  ASSERT_EQ(config.tiers.size(), 3u);
  EXPECT_EQ(gpu_ccs(config.tiers[0]), (std::vector<std::string>{"Tesla T4=7.5", "Tesla V100=7.0", "Tesla P100=6.0"}));
  EXPECT_EQ(gpu_ccs(config.tiers[1]),
            (std::vector<std::string>{"A100=8.0", "GeForce RTX 4090=8.9", "H100=9.0", "H200=9.0"}));
  EXPECT_EQ(gpu_ccs(config.tiers[2]), (std::vector<std::string>{"B200=10.0", "GeForce RTX 5090=12.0", "GB10=12.1"}));
  EXPECT_EQ(config.tiers[0].ptx, PtxPolicy::none);
  EXPECT_EQ(config.tiers[2].ptx, PtxPolicy::highest);
  ASSERT_TRUE(config.tiers[0].driver.has_value());
  EXPECT_EQ(config.tiers[0].driver->str(), "535.104.05");

  // What `orchestrate build` makes of it: the two saxpy projects, in every tier.
  for (const char* name : {"saxpy-cmake", "saxpy-nvcc"}) {
    const Recipe* r = config.find_recipe(name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ(r->source.kind, Source::Kind::path);
    EXPECT_TRUE(std::filesystem::is_directory(r->source.path)) << r->source.path;
    EXPECT_EQ(r->tiers, (std::vector<std::string>{"tier-old", "tier-new", "tier-next"}));
  }
  EXPECT_EQ(config.recipes[0].name, "saxpy-cmake") << "inline recipes first, then included files in sorted order";

  // Every tier is used by some recipe.
  for (const Tier& tier : config.tiers) {
    EXPECT_TRUE(std::ranges::any_of(config.recipes, [&](const Recipe& r) {
      return std::ranges::find(r.tiers, tier.name) != r.tiers.end();
    })) << tier.name;
  }
}

// frameworks/orchestrate.yaml: the same cluster, one recipe per framework.
TEST(RecipeConfig, TheFrameworksConfigurationLoadsCleanly) {
  const std::filesystem::path file = ORC_SOURCE_DIR "/recipes/frameworks/orchestrate.yaml";
  const auto result = load_config(file);
  ASSERT_TRUE(result.has_value()) << rendered(result);
  const Config& config = *result;
  EXPECT_TRUE(config.warnings.empty()) << config.warnings.front().headline();
  const auto main = load_config(ORC_SOURCE_DIR "/recipes/orchestrate.yaml");
  ASSERT_TRUE(main.has_value());
  ASSERT_EQ(config.tiers.size(), main->tiers.size());
  for (std::size_t i = 0; i < config.tiers.size(); ++i) {
    EXPECT_EQ(config.tiers[i].name, main->tiers[i].name) << "the same cluster as the main example";
    EXPECT_EQ(gpu_ccs(config.tiers[i]), gpu_ccs(main->tiers[i]));
  }
  EXPECT_EQ(names(config.recipes), (std::vector<std::string>{"caffe-cmake", "caffe-make", "tf-ops", "vision-ext"}));
  // With the main example's two, one recipe per framework.
  for (Framework f : {Framework::pytorch, Framework::tensorflow, Framework::caffe, Framework::caffe_cmake}) {
    EXPECT_TRUE(std::ranges::any_of(config.recipes, [&](const Recipe& r) { return r.framework == f; }))
        << framework_name(f);
  }

  const Recipe* vision = config.find_recipe("vision-ext");
  ASSERT_NE(vision, nullptr);
  EXPECT_EQ(vision->framework, Framework::pytorch);
  EXPECT_EQ(vision->file, file.parent_path() / "vision-ext.recipe.yaml");
  EXPECT_EQ(vision->source.kind, Source::Kind::path);
  EXPECT_EQ(vision->source.path,
            (std::filesystem::path(ORC_SOURCE_DIR) / "recipes/frameworks/vision-ext").lexically_normal());
  EXPECT_TRUE(std::filesystem::exists(vision->source.path / "setup.py"));
  ASSERT_TRUE(vision->requires_.framework.has_value());
  EXPECT_EQ(vision->requires_.framework->range.text(), ">=2.4");
  EXPECT_TRUE(vision->requires_.framework->range.contains(util::Version(2, 5)));
  EXPECT_FALSE(vision->requires_.framework->range.contains(util::Version(2, 3)));
  ASSERT_EQ(vision->build.size(), 1u);
  EXPECT_EQ(vision->build[0].argv, (std::vector<std::string>{"python", "setup.py", "bdist_wheel"}));
  EXPECT_EQ(vision->artifacts, (std::vector<std::string>{"dist/*.whl"}));
  EXPECT_EQ(vision->tiers, (std::vector<std::string>{"tier-old", "tier-new", "tier-next"}));

  const Recipe* tf = config.find_recipe("tf-ops");
  ASSERT_NE(tf, nullptr);
  EXPECT_EQ(tf->source.kind, Source::Kind::git);
  EXPECT_EQ(tf->requires_.framework->range.text(), ">=2.18");

  const Recipe* caffe = config.find_recipe("caffe-make");
  ASSERT_NE(caffe, nullptr);
  ASSERT_EQ(caffe->build.size(), 1u);
  EXPECT_EQ(caffe->build[0].script,
            (std::filesystem::path(ORC_SOURCE_DIR) / "recipes/frameworks/scripts/caffe-make.sh").lexically_normal());
  EXPECT_TRUE(std::filesystem::exists(caffe->build[0].script));

  // Every tier is used by some recipe.
  for (const Tier& tier : config.tiers) {
    EXPECT_TRUE(std::ranges::any_of(config.recipes, [&](const Recipe& r) {
      return std::ranges::find(r.tiers, tier.name) != r.tiers.end();
    })) << tier.name;
  }
}

TEST(RecipeConfig, ComputeCapabilitiesMayBeWrittenAsNumbers) {
  // YAML reads 8.6 and 9.0 as floats; the scalar text is what counts, so
  // 9.0 is not 9 and 12.1 is not 12.10.
  const Config config = parse_ok(R"(tiers:
  t:
    gpus: [8.6, 86, 9.0, sm_120, "12.1", 75, 8.6]
)");
  ASSERT_EQ(config.tiers.size(), 1u);
  const auto& gpus = config.tiers[0].gpus;
  EXPECT_EQ(gpu_ccs(config.tiers[0]), (std::vector<std::string>{"8.6=8.6", "86=8.6", "9.0=9.0", "sm_120=12.0",
                                                                "12.1=12.1", "75=7.5", "8.6=8.6"}));
  EXPECT_TRUE(std::ranges::all_of(gpus, &TierGpu::given_as_cc));
  EXPECT_EQ(gpus[2].where.line, 3);
  EXPECT_EQ(gpus[2].where.col, 21);
  // The same CC twice is not worth a warning; an unused tier is.
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_EQ(config.warnings[0].headline(), "orchestrate: warning: t.yaml:2:3: tier 't' is not used by any recipe");
}

TEST(RecipeConfig, ProductNamesResolveToTheirCanonicalName) {
  const Config config = parse_ok(R"(tiers:
  t:
    gpus: ["NVIDIA H100 80GB HBM3", rtx4090]
)");
  EXPECT_EQ(gpu_ccs(config.tiers[0]), (std::vector<std::string>{"H100=9.0", "GeForce RTX 4090=8.9"}));
  EXPECT_FALSE(config.tiers[0].gpus[0].given_as_cc);
}

TEST(RecipeConfig, OnlyUnusedTiersAreWarnedAbout) {
  const Config config = parse_ok(R"(tiers:
  used: {gpus: ["H100"]}
  idle: {gpus: ["A100"]}
recipes:
  - {name: a, framework: nvcc, source: {path: a}, tiers: [used]}
)");
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_EQ(config.warnings[0].severity, util::Severity::warning);
  EXPECT_EQ(config.warnings[0].headline(), "orchestrate: warning: t.yaml:3:3: tier 'idle' is not used by any recipe");
  EXPECT_EQ(config.find_tier("used")->gpus.size(), 1u);
  EXPECT_EQ(config.find_tier("nope"), nullptr);
}

TEST(RecipeConfig, RelativePathsResolveAgainstTheFileThatNamesThem) {
  const TempDir dir;
  const auto file = dir.path() / "conf/orchestrate.yaml";
  const Config config = parse_ok(std::string(testing::k_tiers) + R"(recipes:
  - name: rel
    framework: cmake
    source: {path: ../src/./rel}
    tiers: [tier-new]
    build: [{script: scripts/build.sh}]
  - name: abs
    framework: cmake
    source: {path: /opt/src/abs}
    tiers: [tier-new]
)",
                                 file);
  ASSERT_EQ(config.recipes.size(), 2u);
  // Sources need not exist when plans are made.
  EXPECT_EQ(config.recipes[0].source.path, dir.path() / "src/rel");
  EXPECT_EQ(config.recipes[0].build[0].script, dir.path() / "conf/scripts/build.sh");
  EXPECT_TRUE(config.recipes[0].build[0].argv.empty());
  EXPECT_EQ(config.recipes[1].source.path, "/opt/src/abs");
  EXPECT_EQ(config.recipes[0].file, file);
  EXPECT_EQ(config.recipes[0].where.line, 5);
}

TEST(RecipeConfig, GitSourcesNeedARef) {
  const Config config = parse_ok(std::string(testing::k_tiers) + R"(recipes:
  - name: g
    framework: tensorflow
    source: {git: "https://example.com/g.git", ref: v1.2}
    requires: {tensorflow: ">=2.18,<2.20", cuda: "12.4"}
    tiers: [tier-new]
)");
  const Recipe& r = config.recipes.at(0);
  EXPECT_EQ(r.source.kind, Source::Kind::git);
  EXPECT_EQ(r.source.url, "https://example.com/g.git");
  EXPECT_EQ(r.source.ref, "v1.2");
  ASSERT_TRUE(r.requires_.cuda.has_value());
  EXPECT_TRUE(r.requires_.cuda->range.contains(util::Version({12, 4, 1})));
  EXPECT_FALSE(r.requires_.cuda->range.contains(util::Version(12, 5)));
  EXPECT_EQ(r.requires_.cuda->where.line, 8);
  EXPECT_FALSE(r.requires_.cudnn.has_value());
  EXPECT_TRUE(framework_uses_cudnn(r.framework));
  EXPECT_FALSE(framework_uses_cudnn(Framework::nvcc));

  EXPECT_EQ(
      testing::error_headlines(std::string(testing::k_tiers) + R"(recipes:
  - {name: g, framework: cmake, source: {git: "https://example.com/g.git"}, tiers: [tier-new]}
  - {name: h, framework: cmake, source: {git: "x", path: y}, tiers: [tier-new]}
)"),
      (std::vector<std::string>{
          "orchestrate: error: t.yaml:5:41: missing required key 'ref' (a git source names a branch, tag or commit)",
          "orchestrate: error: t.yaml:6:42: a source has either 'path' or 'git', not both"}));
}

TEST(RecipeConfig, BuildStepsAreArgvListsQuotedCommandLinesOrScripts) {
  const auto config = parse_ok(std::string(testing::k_tiers) + R"(recipes:
  - name: b
    framework: cmake
    source: {path: .}
    tiers: [tier-new]
    build:
      - [cmake, "-DNAME=a b", 8.6]
      - cmake -S . "-DCMAKE_CUDA_FLAGS=-O3 -lineinfo" -DX='it''s' --flag="a b"c  ''
      - {script: ci/build.sh}
    artifacts: ["build/*.so", "lib/**/x.a"]
)");
  const auto& steps = config.recipes.at(0).build;
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].argv, (std::vector<std::string>{"cmake", "-DNAME=a b", "8.6"}));
  EXPECT_EQ(steps[1].argv, (std::vector<std::string>{"cmake", "-S", ".", "-DCMAKE_CUDA_FLAGS=-O3 -lineinfo", "-DX=its",
                                                     "--flag=a bc", ""}));
  EXPECT_TRUE(steps[2].argv.empty());
  EXPECT_TRUE(steps[2].script.is_absolute());
  EXPECT_EQ(steps[2].script.filename(), "build.sh");
  EXPECT_EQ(steps[2].where.line, 12);
  EXPECT_EQ(config.recipes.at(0).artifacts, (std::vector<std::string>{"build/*.so", "lib/**/x.a"}));
  EXPECT_TRUE(config.warnings.empty());
}

TEST(RecipeConfig, BadBuildStepsAndArtifactsAreErrors) {
  EXPECT_EQ(testing::error_headlines(std::string(testing::k_tiers) + R"(recipes:
  - name: b
    framework: cmake
    source: {path: .}
    tiers: [tier-new]
    build:
      - make "all
      - []
      - {scrip: x.sh}
      - ~
    artifacts: ["/etc/passwd", "../up/*.so"]
)"),
            (std::vector<std::string>{
                "orchestrate: error: t.yaml:10:9: unterminated \" in build step",
                "orchestrate: error: t.yaml:11:9: empty build step",
                "orchestrate: error: t.yaml:12:10: unknown key 'scrip' (did you mean 'script'?)",
                "orchestrate: error: t.yaml:13:9: expected a build step (a list of arguments, a command line, or "
                "{script: FILE}), got an empty value",
                "orchestrate: error: t.yaml:14:17: artifact pattern '/etc/passwd' must stay inside the build tree "
                "(relative, without '..')",
                "orchestrate: error: t.yaml:14:32: artifact pattern '../up/*.so' must stay inside the build tree "
                "(relative, without '..')"}));
}

TEST(RecipeConfig, IncludedFilesHoldOneRecipeEachInSortedOrder) {
  const TempDir dir;
  dir.write("recipes/b.yaml", "name: bee\nframework: nvcc\nsource: {path: ../src/b}\ntiers: [tier-new]\n");
  dir.write("recipes/a.yaml", "name: ay\nframework: cmake\nsource: {path: src}\ntiers: [tier-new]\n");
  dir.write("recipes/notes.txt", "not yaml: [\n");
  dir.write("recipes/.hidden.yaml", "garbage: [\n");
  dir.write("single.yaml", "name: one\nframework: cmake\nsource: {path: s}\ntiers: [tier-new]\n");
  const auto main = dir.write("orchestrate.yaml",
                              std::string(testing::k_tiers) + R"(include: ["recipes/*.yaml", "single.yaml", "*.yaml"]
recipes:
  - {name: inline, framework: cmake, source: {path: x}, tiers: [tier-new]}
)");
  const auto result = load_config(main);
  ASSERT_TRUE(result.has_value()) << result.error().front().headline();
  EXPECT_EQ(names(result->recipes), (std::vector<std::string>{"inline", "ay", "bee", "one"}));
  const Recipe* ay = result->find_recipe("ay");
  EXPECT_EQ(ay->file, dir.path() / "recipes/a.yaml");
  // Paths in an included file resolve against that file.
  EXPECT_EQ(ay->source.path, dir.path() / "recipes/src");
  EXPECT_EQ(result->find_recipe("bee")->source.path, dir.path() / "src/b");
}

TEST(RecipeConfig, IncludeProblemsPointAtTheIncludeOrIntoTheIncludedFile) {
  const TempDir dir;
  dir.write("r/bad.yaml", "name: bad\nframwork: nvcc\nsource: {path: s}\ntiers: [tier-new]\n");
  dir.write("r/broken.yaml", "name: [\n");
  const auto main =
      dir.write("orchestrate.yaml", std::string(testing::k_tiers) +
                                        "include: [\"none/*.yaml\", \"r/*.yaml\", missing.yaml, \"*/x.yaml\"]\n");
  const auto result = load_config(main);
  ASSERT_FALSE(result.has_value());
  std::vector<std::string> got;
  for (const auto& d : result.error()) got.push_back(d.headline());
  const std::string m = main.string(), r = (dir.path() / "r").string(), base = dir.path().string();
  EXPECT_EQ(got,
            (std::vector<std::string>{
                "orchestrate: error: " + m + ":4:11: cannot list " + base + "/none: No such file or directory",
                // Not YAML, so maybe no recipe file: named with where it broke, not quoted.
                "orchestrate: error: " + m + ":4:26: included file " + r +
                    "/broken.yaml is not a recipe file: YAML syntax error: end of sequence flow not found at line 2, "
                    "column 1 (a recipe file is one mapping with name, framework, source and tiers)",
                "orchestrate: error: " + m + ":4:38: cannot read " + base + "/missing.yaml: No such file or directory",
                "orchestrate: error: " + m + ":4:52: include '*/x.yaml' matches no file",
                "orchestrate: error: " + r + "/bad.yaml:2:1: unknown key 'framwork' (did you mean 'framework'?)",
            }));

  const auto empty = dir.write("empty.yaml", std::string(testing::k_tiers) + "include: [\"r/*.json\"]\n");
  const auto none = load_config(empty);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().at(0).headline(),
            "orchestrate: error: " + empty.string() + ":4:11: include 'r/*.json' matches no file");
}

// include: takes the same globs as artifacts: (util/glob.hpp), wildcards in
// any component and ** for any depth.
TEST(RecipeConfig, IncludeGlobsRecurseAndSkipHiddenDirectories) {
  const TempDir dir;
  const std::string recipe = "framework: cmake\nsource: {path: s}\ntiers: [tier-new]\n";
  dir.write("recipes/gpu/a.recipe.yaml", "name: a\n" + recipe);
  dir.write("recipes/gpu/old/b.recipe.yaml", "name: b\n" + recipe);
  dir.write("recipes/c.recipe.yaml", "name: c\n" + recipe);
  dir.write("recipes/.drafts/d.recipe.yaml", "name: [\n");
  dir.write("teams/x/e.recipe.yaml", "name: e\n" + recipe);
  dir.write("teams/y/f.yaml", "name: f\n" + recipe);
  const auto main =
      dir.write("orchestrate.yaml",
                std::string(testing::k_tiers) + "include: [\"recipes/**/*.recipe.yaml\", \"teams/[!y]/*.yaml\"]\n");
  const auto result = load_config(main);
  ASSERT_TRUE(result.has_value()) << result.error().front().headline();
  EXPECT_EQ(names(result->recipes), (std::vector<std::string>{"c", "a", "b", "e"}));
  EXPECT_EQ(result->find_recipe("b")->file, dir.path() / "recipes/gpu/old/b.recipe.yaml");
  EXPECT_EQ(result->find_recipe("b")->source.path, dir.path() / "recipes/gpu/old/s");
}

TEST(RecipeConfig, IncludedFilesCannotIncludeOrDeclareTiers) {
  const TempDir dir;
  dir.write("r.yaml", "name: r\nframework: nvcc\nsource: {path: s}\ntiers: [tier-new]\ninclude: [\"*.yaml\"]\n");
  const auto main = dir.write("main.yml", std::string(testing::k_tiers) + "include: [r.yaml]\n");
  const auto result = load_config(main);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().at(0).headline(),
            "orchestrate: error: " + (dir.path() / "r.yaml").string() + ":5:1: unknown key 'include'");
}

}  // namespace
}  // namespace orc::recipe

namespace orc::recipe {
namespace {

TEST(RecipeConfig, ImageAndStamp) {
  const std::string recipe = std::string(testing::k_tiers) +
                             "recipes:\n  - name: app\n    framework: cmake\n    source: {path: .}\n"
                             "    tiers: [tier-new]\n";
  const Config config = parse_ok(recipe + "    image: 127.0.0.1:5000/team/app\n    stamp: true\n");
  ASSERT_EQ(config.recipes.size(), 1u);
  EXPECT_EQ(config.recipes[0].image, "127.0.0.1:5000/team/app");
  EXPECT_TRUE(config.recipes[0].stamp);
  EXPECT_FALSE(parse_ok(recipe).recipes[0].stamp);

  EXPECT_EQ(testing::error_headlines(recipe + "    stamp: true\n"),
            std::vector<std::string>{"orchestrate: error: t.yaml:9:12: 'stamp: true' needs 'image:' (the repository "
                                     "of the image the build makes)"});
  EXPECT_EQ(testing::error_headlines(recipe + "    image: team/app:v1\n").size(), 1u);
  EXPECT_EQ(testing::error_headlines(recipe + "    image: team/app\n    stamp: yes please\n").size(), 1u);
}

}  // namespace
}  // namespace orc::recipe
