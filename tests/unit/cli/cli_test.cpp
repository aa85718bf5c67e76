// The command line as a user sees it: stdout, stderr and exit codes, run
// in-process through cli::run.
#include "orchestrator/cli/cli.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace orc::cli {
namespace {

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "orchestrate");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() /
            ("orc-cli-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(m_dir);
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = m_dir / name;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path m_dir;
};

constexpr const char* k_config = R"(tiers:
  tier-new:
    gpus: ["A100", "RTX 3090", "GeForce RTX 4090", "NVIDIA H100 80GB HBM3"]
  tier-mixed:
    gpus: ["Tesla K80", "B200"]
toolkits: ["11.8", "12.4", "12.8", "13.0"]
recipes:
  - name: ext
    framework: pytorch
    source: {path: src}
    tiers: [tier-new]
  - name: tf
    framework: tensorflow
    source: {git: "https://example.invalid/tf.git", ref: v2.18.0}
    requires: {tensorflow: ">=2.18"}
    tiers: [tier-new]
  - name: mixed
    framework: cmake
    source: {path: src}
    tiers: [tier-mixed]
)";

TEST_F(CliTest, PlanJsonContract) {
  const auto config = write("orchestrate.yaml", k_config);
  const auto r = run_cli({"plan", "tier-new", "-f", config, "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // stdout is JSON and nothing else
  ASSERT_EQ(j["plans"].size(), 2u);
  const auto& p = j["plans"][0];
  EXPECT_EQ(p["recipe"], "ext");
  EXPECT_EQ(p["tier"], "tier-new");
  EXPECT_EQ(p["status"], "ok");
  EXPECT_EQ(p["toolkit"], "13.0");
  EXPECT_TRUE(p["cudnn"].is_string());
  EXPECT_TRUE(p["image"].is_null());
  EXPECT_EQ(p["gpus"][3]["name"], "H100");
  EXPECT_EQ(p["gpus"][3]["cc"], "9.0");
  EXPECT_EQ(p["sass"], nlohmann::json({"sm_80", "sm_86", "sm_89", "sm_90"}));
  EXPECT_EQ(p["ptx"], nlohmann::json({"compute_90"}));
  EXPECT_EQ(p["env"]["TORCH_CUDA_ARCH_LIST"], "8.0;8.6;8.9;9.0+PTX");
  EXPECT_EQ(p["nvcc_flags"].size(), 5u);
  EXPECT_FALSE(p["reasons"].empty());
  EXPECT_TRUE(p["warnings"].is_array());
  const auto& tf = j["plans"][1];
  EXPECT_EQ(tf["env"]["TF_NEED_CUDA"], "1");
  EXPECT_EQ(tf["env"]["TF_CUDA_COMPUTE_CAPABILITIES"], "sm_80,sm_86,sm_89,compute_90");
  EXPECT_EQ(tf["env"]["TF_CUDA_VERSION"], "13.0");
  EXPECT_EQ(tf["env"]["HERMETIC_CUDA_COMPUTE_CAPABILITIES"], "sm_80,sm_86,sm_89,compute_90");
}

// The README's main job: the example configuration plans cleanly, and each
// tier's driver picks its toolkit.
TEST_F(CliTest, ExampleConfigurationPlansEveryRecipe) {
  const auto r = run_cli({"plan", "-f", ORC_SOURCE_DIR "/recipes/orchestrate.yaml", "--json"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, std::set<std::string>> toolkits;
  for (const auto& p : j["plans"]) {
    EXPECT_EQ(p["status"], "ok") << p.dump();
    toolkits[p["tier"]].insert(p["toolkit"].get<std::string>());
  }
  EXPECT_EQ(toolkits["tier-old"], std::set<std::string>{"11.8"});   // V100/P100: not 13.x; driver 535: not 12.4
  EXPECT_EQ(toolkits["tier-new"], std::set<std::string>{"12.4"});   // driver 550.54.15: not 12.8 or 13.0
  EXPECT_EQ(toolkits["tier-next"], std::set<std::string>{"13.0"});  // GB10 needs >= 12.9
  EXPECT_EQ(j["plans"].size(), 13u);
}

TEST_F(CliTest, UnsatisfiablePlanExitsOneWithReasons) {
  const auto config = write("orchestrate.yaml", k_config);
  const auto r = run_cli({"plan", "tier-mixed", "-f", config, "--json"});
  EXPECT_EQ(r.code, 1);
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j["plans"][0];
  EXPECT_EQ(p["status"], "unsatisfiable");
  EXPECT_TRUE(p["toolkit"].is_null());
  const std::string reasons = p["reasons"].dump();
  EXPECT_NE(reasons.find("Tesla K80 (3.7) needs CUDA <= 11.8, B200 (10.0) needs CUDA >= 12.8"), std::string::npos) << reasons;
  EXPECT_EQ(p["split"], nlohmann::json({{"Tesla K80"}, {"B200"}}));
}

TEST_F(CliTest, BadConfigIsExitTwoWithFileLineColAndNoOutput) {
  const auto config = write("bad.yaml", "tiers:\n  t:\n    gpus: [A100]\nrecipes:\n  - name: x\n    framwork: cmake\n");
  const auto r = run_cli({"plan", "-f", config, "--json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("orchestrate: error: " + config + ":6:5: unknown key 'framwork' (did you mean 'framework'?)"),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, MissingConfigAndUnknownTier) {
  auto r = run_cli({"plan", "-f", (m_dir / "nope.yaml").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nope.yaml"), std::string::npos) << r.err;
  const auto config = write("orchestrate.yaml", k_config);
  r = run_cli({"plan", "tier-nwe", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no tier 'tier-nwe' in " + config + " (did you mean 'tier-new'?)"), std::string::npos) << r.err;
}

TEST_F(CliTest, ToolkitsJsonContract) {
  const auto r = run_cli({"toolkits", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  const nlohmann::json* cuda13 = nullptr;
  for (const auto& row : j)
    if (row["version"] == "13.0") cuda13 = &row;
  ASSERT_NE(cuda13, nullptr);
  EXPECT_EQ((*cuda13)["archs"].front(), "sm_75");
  EXPECT_EQ((*cuda13)["archs"].back(), "sm_121f");
  EXPECT_EQ((*cuda13)["default_arch"], "sm_75");
  EXPECT_EQ((*cuda13)["min_driver"], "580.65.06");
  EXPECT_EQ((*cuda13)["max_gcc"], 15);
  EXPECT_TRUE((*cuda13)["deprecated"].is_array());
  EXPECT_EQ(j.front()["version"], "8.0");

  const auto cudnn = run_cli({"toolkits", "--cudnn", "--json"});
  ASSERT_EQ(cudnn.code, 0);
  EXPECT_TRUE(nlohmann::json::parse(cudnn.out).is_array());
}

TEST_F(CliTest, GpusLookupAndDidYouMean) {
  auto r = run_cli({"gpus", "rtx4090", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["cc"], "8.9");
  r = run_cli({"gpus", "RTX 4909"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "orchestrate: error: unknown GPU 'RTX 4909' (did you mean 'GeForce RTX 4090'?)\n");
  r = run_cli({"gpus", "--json"});
  EXPECT_GT(nlohmann::json::parse(r.out).size(), 100u);
}

TEST_F(CliTest, HelpEverywhereAndUsageErrors) {
  for (const std::string cmd : {"plan", "gpus", "toolkits"}) {
    const auto r = run_cli({cmd, "--help"});
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find("--json"), std::string::npos) << cmd << ": " << r.out;
  }
  EXPECT_EQ(run_cli({"--help"}).code, 0);
  auto r = run_cli({"plann"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "orchestrate: error: unknown command 'plann' (did you mean 'plan'?)\n");
  r = run_cli({"toolkits", "--bogus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run_cli({}).code, 2);
}

}  // namespace
}  // namespace orc::cli
