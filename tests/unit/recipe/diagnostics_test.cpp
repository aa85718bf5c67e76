// The errors users see, pinned byte for byte: position, wording, and the
// did-you-mean that makes a typo a one-second fix.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/unit/recipe/test_support.hpp"

namespace orc::recipe {
namespace {

using testing::error_headlines;
using Lines = std::vector<std::string>;

TEST(RecipeDiagnostics, UnknownKeySuggestsTheKeyMeantAndShowsACaret) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: ["H100"]
recipes:
  - name: vision
    source: {path: src}
    framwork: pytorch
    tiers: [tier-new]
)";
  const auto result = parse_config(text, "t.yaml");
  ASSERT_FALSE(result.has_value());
  // One typo, one error: the missing 'framework' is not reported again.
  ASSERT_EQ(result.error().size(), 1u);
  const auto& d = result.error()[0];
  EXPECT_EQ(d.headline(), "orchestrate: error: t.yaml:7:5: unknown key 'framwork' (did you mean 'framework'?)");
  EXPECT_EQ(d.render(),
            "orchestrate: error: t.yaml:7:5: unknown key 'framwork' (did you mean 'framework'?)\n"
            "        framwork: pytorch\n"
            "        ^\n");
}

TEST(RecipeDiagnostics, UnknownKeysAtEveryLevelSuggestAmongThatLevelsKeys) {
  const std::string text = R"(tier:
  x: 1
tiers:
  tier-new:
    gpu: ["H100"]
    archs: [sm_90]
recipes:
  - name: a
    framework: cmake
    source: {pth: src}
    tier: [tier-new]
)";
  EXPECT_EQ(error_headlines(text),
            (Lines{"orchestrate: error: t.yaml:1:1: unknown key 'tier' (did you mean 'tiers'?)",
                   "orchestrate: error: t.yaml:5:5: unknown key 'gpu' (did you mean 'gpus'?)",
                   "orchestrate: error: t.yaml:6:5: unknown key 'archs'",
                   "orchestrate: error: t.yaml:10:14: unknown key 'pth' (did you mean 'path'?)",
                   "orchestrate: error: t.yaml:11:5: unknown key 'tier' (did you mean 'tiers'?)"}));
}

TEST(RecipeDiagnostics, UnknownGpuSuggestsTheClosestProduct) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: ["H100", "RTX 4909"]
)";
  EXPECT_EQ(error_headlines(text),
            Lines{"orchestrate: error: t.yaml:3:20: unknown GPU 'RTX 4909' (did you mean 'GeForce RTX 4090'?)"});
}

TEST(RecipeDiagnostics, TiersListDevicesNotCompilationTargets) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: [9.0a, sm_100f, 8.60]
)";
  EXPECT_EQ(error_headlines(text),
            (Lines{"orchestrate: error: t.yaml:3:12: '9.0a' is a compilation target, not a device: a tier lists GPUs "
                   "(did you mean '9.0'?)",
                   "orchestrate: error: t.yaml:3:18: 'sm_100f' is a compilation target, not a device: a tier lists "
                   "GPUs (did you mean '10.0'?)",
                   "orchestrate: error: t.yaml:3:27: '8.60' is not a compute capability: a tier takes one as "
                   "major.minor (\"9.0\", \"8.6\") or a GPU name (\"H100\")"}));
}

// Issue 13: a CC no GPU has is an error that names the neighbours; the hint
// for a bare `9` names only what a tier accepts; one only nvcc knows warns.
TEST(RecipeDiagnostics, ACcNoGpuHasIsAnErrorWithItsNeighbours) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: ["7.1", "13.0", 9, "8.9"]
)";
  EXPECT_EQ(error_headlines(text),
            (Lines{"orchestrate: error: t.yaml:3:12: 7.1 is not a compute capability (did you mean 7.0 or 7.2?)",
                   "orchestrate: error: t.yaml:3:19: 13.0 is not a compute capability (did you mean 12.1?)",
                   "orchestrate: error: t.yaml:3:27: '9' is not a compute capability: a tier takes one as "
                   "major.minor (\"9.0\", \"8.6\") or a GPU name (\"H100\")"}));
}

TEST(RecipeDiagnostics, ACcOnlyNvccKnowsIsAWarning) {
  const auto config = parse_config("tiers:\n  t:\n    gpus: [\"8.8\"]\n", "t.yaml");
  ASSERT_TRUE(config.has_value());
  std::vector<std::string> warnings;
  for (const auto& w : config->warnings) warnings.push_back(w.headline());
  EXPECT_NE(std::ranges::find(warnings,
                              "orchestrate: warning: t.yaml:3:12: no known GPU has compute capability 8.8 "
                              "(nvcc accepts sm_88; the tables confirm no product)"),
            warnings.end())
      << ::testing::PrintToString(warnings);
  EXPECT_EQ(config->tiers[0].gpus[0].cc, (arch::ComputeCapability{8, 8}));
}

// A device the tables lack is declared with its CC; a known name must agree.
TEST(RecipeDiagnostics, ADeclaredDeviceCarriesItsNameAndCc) {
  const auto config = parse_config("tiers:\n  t:\n    gpus: [{name: \"Lab Card X\", cc: 8.6}, \"H100\"]\n", "t.yaml");
  ASSERT_TRUE(config.has_value()) << config.error()[0].headline();
  const TierGpu& lab = config->tiers[0].gpus[0];
  EXPECT_EQ(lab.name, "Lab Card X");
  EXPECT_EQ(lab.cc, (arch::ComputeCapability{8, 6}));
  EXPECT_TRUE(lab.declared);
  EXPECT_FALSE(lab.given_as_cc);
  EXPECT_FALSE(config->tiers[0].gpus[1].declared);

  const std::string bad = R"(tiers:
  t:
    gpus: [{name: "RTX 4090", cc: 8.6}, {name: "Card"}, {name: "Card", cc: 9.0a}, {name: "Card", cc: "7.1"}]
)";
  EXPECT_EQ(error_headlines(bad),
            (Lines{"orchestrate: error: t.yaml:3:35: the tables give GeForce RTX 4090 compute capability 8.9, not "
                   "8.6: drop 'cc' or the GPU's name",
                   "orchestrate: error: t.yaml:3:41: missing required key 'cc'",
                   "orchestrate: error: t.yaml:3:76: '9.0a' is a compilation target, not a device: a tier lists GPUs "
                   "(did you mean '9.0'?)",
                   "orchestrate: error: t.yaml:3:102: 7.1 is not a compute capability (did you mean 7.0 or 7.2?)"}));
}

TEST(RecipeDiagnostics, WrongTypesSayWhatWasExpectedAndWhatWasFound) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: H100
recipes:
  - name: [a, b]
    framework: cmake
    source: {path: src}
    tiers: tier-new
  - just a string
)";
  EXPECT_EQ(error_headlines(text),
            (Lines{"orchestrate: error: t.yaml:3:11: expected a list for 'gpus', got a string",
                   "orchestrate: error: t.yaml:5:11: expected a string for 'name', got a list",
                   "orchestrate: error: t.yaml:8:12: expected a list of tier names for 'tiers', got a string",
                   "orchestrate: error: t.yaml:9:5: expected a mapping for a recipe, got a string"}));
}

TEST(RecipeDiagnostics, VersionRangesMustBeSatisfiableAndFitTheFramework) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: ["H100"]
recipes:
  - name: ext
    framework: pytorch
    source: {path: src}
    requires: {cuda: ">=13,<12", pytorch: ">=2.4", tensorflow: ">=2.18", cudnn: "9.x"}
    tiers: [tier-new]
)";
  EXPECT_EQ(error_headlines(text),
            (Lines{"orchestrate: error: t.yaml:8:22: impossible range '>=13,<12' for 'cuda': no version satisfies it",
                   "orchestrate: error: t.yaml:8:52: requirement 'tensorflow' does not apply to a pytorch recipe",
                   "orchestrate: error: t.yaml:8:81: invalid version range for 'cudnn': in range '9.x': '9.x' is not a "
                   "version (expected numbers separated by dots, like 12.4)"}));
}

// `cudnn: none` plans a build without cuDNN (Caffe's USE_CUDNN := 0); a
// TensorFlow GPU build needs cuDNN, so there it is an error.
TEST(RecipeDiagnostics, CudnnNoneIsRefusedForTensorflow) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: ["H100"]
recipes:
  - name: tf
    framework: tensorflow
    source: {path: src}
    requires: {cudnn: none}
    tiers: [tier-new]
)";
  EXPECT_EQ(error_headlines(text),
            (Lines{"orchestrate: error: t.yaml:8:23: 'cudnn: none' does not apply to a tensorflow recipe: its GPU "
                   "build needs cuDNN (give a range, \">=9\", or leave cudnn out)"}));
}

TEST(RecipeDiagnostics, WatchSettingsAreChecked) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: ["H100"]
watch:
  policy: latest
  images:
    - {url: "ftp://mirror/nvidia/cuda", flavour: sdk, cudnn: maybe}
    - {os: ubuntu22.04}
  redist: ["developer.download.nvidia.com/compute/cuda/redist/", "https://u:pw@host/redist/", "https://h/r/?t=1"]
recipes:
  - name: k
    framework: cmake
    source: {path: src}
    tiers: [tier-new]
    watch: minr
)";
  EXPECT_EQ(
      error_headlines(text),
      (Lines{"orchestrate: error: t.yaml:5:11: unknown watch policy 'latest' (known: patch, minor, major, pinned)",
             "orchestrate: error: t.yaml:7:13: invalid watched image 'url': expected an http:// or https:// URL",
             "orchestrate: error: t.yaml:7:50: unknown flavour 'sdk' (nvidia/cuda has base, runtime and devel)",
             "orchestrate: error: t.yaml:7:62: 'cudnn' is true or false",
             "orchestrate: error: t.yaml:8:7: missing required key 'url'",
             "orchestrate: error: t.yaml:9:12: invalid 'redist' URL: expected an http:// or https:// URL of a "
             "directory",
             "orchestrate: error: t.yaml:9:66: invalid 'redist' URL: no credentials, query, fragment or blank (it "
             "is printed as given)",
             "orchestrate: error: t.yaml:9:95: invalid 'redist' URL: no credentials, query, fragment or blank (it "
             "is printed as given)",
             "orchestrate: error: t.yaml:15:12: unknown watch policy 'minr' (known: patch, minor, major, pinned) "
             "(did you mean 'minor'?)"}));
}

// notify: a URL that takes a POST (its path, a webhook's secret, is never
// quoted); keep: a whole number of sets, 1 or more.
TEST(RecipeDiagnostics, WatchNotifyAndKeepAreChecked) {
  const std::string head = "tiers:\n  t:\n    gpus: [\"H100\"]\nwatch:\n  images: [{url: \"http://r/nvidia/cuda\"}]\n";
  EXPECT_EQ(error_headlines(head + "  notify: hooks.example/T0/secret\n  keep: 0\n"),
            (Lines{"orchestrate: error: t.yaml:6:11: invalid 'notify': expected an http:// or https:// URL that takes "
                   "a JSON POST",
                   "orchestrate: error: t.yaml:7:9: 'keep' is how many verified sets to keep per recipe x tier: a "
                   "whole number, 1 or more"}));
  EXPECT_EQ(error_headlines(head + "  keep: three\n").size(), 1u);
  EXPECT_EQ(error_headlines(head + "  keep: -1\n").size(), 1u);
  const Config ok = testing::parse_ok(head + "  notify: \"https://hooks.example/T0/secret\"\n  keep: 3\n");
  EXPECT_EQ(ok.watch->notify, "https://hooks.example/T0/secret");
  EXPECT_EQ(ok.watch->keep, 3u);
}

// debian: the image-catalog feed's mirror (printed as given) and image names.
TEST(RecipeDiagnostics, WatchDebianIsChecked) {
  const std::string head = "tiers:\n  t:\n    gpus: [\"H100\"]\nwatch:\n";
  EXPECT_EQ(error_headlines(head + "  debian: {mirror: \"ftp://m/debian\", images: [{a: b}], suite: sid}\n"),
            (Lines{"orchestrate: error: t.yaml:5:20: invalid 'debian' mirror: expected an http:// or https:// URL "
                   "(the directory holding dists/, as in apt's sources)",
                   "orchestrate: error: t.yaml:5:47: expected a string in 'debian: images' (an offline image, as "
                   "`images list` names it), got a mapping",
                   "orchestrate: error: t.yaml:5:56: unknown key 'suite'"}));
  EXPECT_EQ(error_headlines(head + "  debian: yes\n").size(), 1u);
  const Config defaults = testing::parse_ok(head + "  debian: {}\n");
  ASSERT_TRUE(defaults.watch->debian);
  EXPECT_TRUE(defaults.watch->debian->mirror.empty());
  EXPECT_TRUE(defaults.watch->debian->images.empty());
  const Config named =
      testing::parse_ok(head + "  debian: {mirror: \"http://127.0.0.1:8080/debian\", images: [12.4-trixie]}\n");
  EXPECT_EQ(named.watch->debian->mirror, "http://127.0.0.1:8080/debian");
  ASSERT_EQ(named.watch->debian->images.size(), 1u);
  EXPECT_EQ(named.watch->debian->images[0].name, "12.4-trixie");
  EXPECT_EQ(named.watch->debian->images[0].where.line, 5);
}

TEST(RecipeDiagnostics, UnknownTierInARecipeSuggestsADeclaredOne) {
  const std::string text = std::string(testing::k_tiers) + R"(recipes:
  - name: a
    framework: nvcc
    source: {git: "https://example.com/a.git", ref: v1}
    tiers: [tier-new, tier-nwe]
)";
  EXPECT_EQ(error_headlines(text),
            Lines{"orchestrate: error: t.yaml:8:23: unknown tier 'tier-nwe' (did you mean 'tier-new'?)"});
}

TEST(RecipeDiagnostics, BadEnumsAndVersionsSuggestTheValidSpelling) {
  const std::string text = R"(toolkits: ["12.4", "12", banana]
tiers:
  tier-new:
    gpus: ["H100"]
    ptx: hihgest
    driver: "550.x"
recipes:
  - name: Vision
    framework: pytroch
    source: {path: src}
    tiers: [tier-new]
)";
  EXPECT_EQ(error_headlines(text),
            (Lines{"orchestrate: error: t.yaml:1:20: toolkit '12' must be written major.minor, like 12.4",
                   "orchestrate: error: t.yaml:1:26: invalid toolkit version: 'banana' is not a version (expected "
                   "numbers separated by dots, like 12.4)",
                   "orchestrate: error: t.yaml:5:10: unknown ptx policy 'hihgest' (did you mean 'highest'?)",
                   "orchestrate: error: t.yaml:6:13: invalid driver version: '550.x' is not a version (expected "
                   "numbers separated by dots, like 12.4)",
                   "orchestrate: error: t.yaml:8:11: invalid recipe name 'Vision': use lower-case letters, digits, "
                   "'.', '_' and '-', starting with a letter or digit",
                   "orchestrate: error: t.yaml:9:16: unknown framework 'pytroch' (did you mean 'pytorch'?)"}));
}

TEST(RecipeDiagnostics, MissingRequiredKeysPointAtTheEnclosingMapping) {
  const std::string text = R"(tiers:
  tier-new:
    ptx: all
recipes:
  - name: a
    source: {ref: v1}
)";
  EXPECT_EQ(error_headlines(text), (Lines{"orchestrate: error: t.yaml:3:5: missing required key 'gpus'",
                                          "orchestrate: error: t.yaml:5:5: missing required key 'framework'",
                                          "orchestrate: error: t.yaml:5:5: missing required key 'tiers'",
                                          "orchestrate: error: t.yaml:6:13: missing required key 'path' or 'git'"}));
  EXPECT_EQ(error_headlines("recipes: []\n"), Lines{"orchestrate: error: t.yaml:1:1: missing required key 'tiers'"});
}

TEST(RecipeDiagnostics, DuplicatesAreReportedWhereTheSecondOneIs) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: ["H100"]
    gpus: ["A100"]
  tier-new:
    gpus: ["B200"]
recipes:
  - {name: a, framework: cmake, source: {path: a}, tiers: [tier-new]}
  - {name: a, framework: nvcc, source: {path: b}, tiers: [tier-new]}
)";
  EXPECT_EQ(error_headlines(text),
            (Lines{"orchestrate: error: t.yaml:4:5: duplicate key 'gpus'",
                   "orchestrate: error: t.yaml:5:3: duplicate tier 'tier-new' (first declared at line 2)",
                   "orchestrate: error: t.yaml:9:5: duplicate recipe name 'a' (first defined at t.yaml:8:5)"}));
}

TEST(RecipeDiagnostics, YamlSyntaxErrorsCarryTheirPosition) {
  const std::string text = R"(tiers:
  tier-new:
    gpus: ["H100", "A100"
recipes: []
)";
  // yaml-cpp reports where it noticed, which for an unclosed list is the
  // next line's key.
  EXPECT_EQ(error_headlines(text),
            Lines{"orchestrate: error: t.yaml:4:1: YAML syntax error: end of sequence flow not found"});
  EXPECT_EQ(error_headlines("tiers:\n  a: b\n c: d\n"),
            Lines{"orchestrate: error: t.yaml:3:2: YAML syntax error: end of map not found"});
  EXPECT_EQ(error_headlines("tiers: {a: \"x\\q\"}\n"),
            Lines{"orchestrate: error: t.yaml:1:16: YAML syntax error: unknown escape character: q"});
}

TEST(RecipeDiagnostics, OneDocumentPerFileAndNotAnEmptyOne) {
  EXPECT_EQ(error_headlines(std::string(testing::k_tiers) + "---\ntiers: {}\n"),
            Lines{"orchestrate: error: t.yaml:4:1: a configuration file holds one YAML document; found a second one"});
  EXPECT_EQ(error_headlines(""),
            Lines{"orchestrate: error: t.yaml: empty configuration: expected a mapping with 'tiers'"});
  EXPECT_EQ(error_headlines("- a\n"),
            Lines{"orchestrate: error: t.yaml:1:1: expected a mapping at the top level (with 'tiers'), got a list"});
}

TEST(RecipeDiagnostics, DeepNestingIsAnErrorNotACrash) {
  // Far past yaml-cpp's own recursion guard, and past the stack of an
  // instrumented build: it must be refused before the parser recurses.
  EXPECT_EQ(error_headlines(std::string(100, '[') + std::string(100, ']')),
            Lines{"orchestrate: error: t.yaml:1:65: nesting deeper than 64 levels"});
  const auto unclosed = error_headlines(std::string(100000, '['));
  ASSERT_EQ(unclosed.size(), 1u);
  EXPECT_TRUE(unclosed[0].ends_with(": nesting deeper than 64 levels")) << unclosed[0];
  const auto maps = error_headlines(std::string(100000, '{'));
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_TRUE(maps[0].ends_with(": nesting deeper than 64 levels")) << maps[0];
  std::string block = "tiers:\n";
  for (int depth = 1; depth < 80; ++depth) block += std::string(2 * depth, ' ') + "k:\n";
  EXPECT_EQ(error_headlines(block), Lines{"orchestrate: error: t.yaml:65:129: nesting deeper than 64 levels"});
  // 64 levels are still parsed, and judged by the schema.
  const auto at_limit = error_headlines(std::string(64, '[') + std::string(64, ']'));
  ASSERT_EQ(at_limit.size(), 1u);
  EXPECT_EQ(at_limit[0],
            "orchestrate: error: t.yaml:1:1: expected a mapping at the top level (with 'tiers'), got a list");
}

TEST(RecipeDiagnostics, ErrorsFromEverySectionComeBackTogetherInFileOrder) {
  // Recipes before tiers in the file: errors still come out in line order.
  const std::string text = R"(recipes:
  - name: a
    framework: cmak
    source: {path: a}
    tiers: [nope]
tiers:
  t:
    gpus: ["Voodoo"]
)";
  EXPECT_EQ(error_headlines(text),
            (Lines{"orchestrate: error: t.yaml:3:16: unknown framework 'cmak' (did you mean 'cmake'?)",
                   "orchestrate: error: t.yaml:5:13: unknown tier 'nope'",
                   "orchestrate: error: t.yaml:8:12: unknown GPU 'Voodoo'; a device the tables lack is declared with "
                   "its compute capability: {name: \"Voodoo\", cc: \"8.6\"}"}));
}

TEST(RecipeDiagnostics, StopsAfterFiftyErrorsAndSaysSo) {
  std::string text = "tiers:\n  t:\n    gpus:\n";
  for (int i = 0; i < 80; ++i) text += "      - bogus-gpu-" + std::to_string(i) + "\n";
  const auto got = error_headlines(text);
  ASSERT_EQ(got.size(), 51u);
  const std::string hint = "; a device the tables lack is declared with its compute capability: {name: \"";
  EXPECT_EQ(got[0], "orchestrate: error: t.yaml:4:9: unknown GPU 'bogus-gpu-0'" + hint + "bogus-gpu-0\", cc: \"8.6\"}");
  EXPECT_EQ(got[49],
            "orchestrate: error: t.yaml:53:9: unknown GPU 'bogus-gpu-49'" + hint + "bogus-gpu-49\", cc: \"8.6\"}");
  EXPECT_EQ(got[50], "orchestrate: error: t.yaml: too many errors; stopped after the first 50");
}

TEST(RecipeDiagnostics, LoadConfigReportsAnUnreadableFile) {
  const auto result = load_config("/nonexistent-orc-dir/orchestrate.yaml");
  ASSERT_FALSE(result.has_value());
  ASSERT_EQ(result.error().size(), 1u);
  EXPECT_EQ(result.error()[0].headline(),
            "orchestrate: error: cannot read /nonexistent-orc-dir/orchestrate.yaml: No such file or directory");
}

}  // namespace
}  // namespace orc::recipe
