// The nvcc front (orchestrator/front) against real nvcc and real projects,
// on the host engine:
//  - what it reads from a command line equals what each real nvcc's
//    --dryrun embeds (13.0 at /usr/local/cuda, and 11.8 / 12.4 from
//    ./toolchains when scripts/install-cuda-toolkits.sh put them there);
//  - a CMake project that pins its archs after project() stops at its first
//    nvcc call under `nvcc: verify`, naming CMakeLists.txt and the line, with
//    nothing stored; under `nvcc: enforce` it builds exactly the plan;
//  - a Makefile that probes the GPU: the probe is reported once, a variable
//    in the caller's shell does not reach it (same key), one in `env:` does.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/compat/toolkits.hpp"
#include "orchestrator/front/front.hpp"
#include "tests/integration/host_build.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;

const fs::path k_fixtures = fs::path(ORC_SOURCE_DIR) / "tests/integration/front";

// Each nvcc found: /usr/local/cuda and ./toolchains/cuda-X.Y.
std::vector<std::pair<std::string, fs::path>> toolkits() {
  std::vector<std::pair<std::string, fs::path>> out;
  if (::access("/usr/local/cuda/bin/nvcc", X_OK) == 0) out.emplace_back("13.0", "/usr/local/cuda");
  for (const char* v : {"12.4", "11.8"}) {
    const fs::path root = fs::path(ORC_SOURCE_DIR) / "toolchains" / (std::string("cuda-") + v);
    if (::access((root / "bin/nvcc").c_str(), X_OK) == 0) out.emplace_back(v, root);
  }
  return out;
}

const compat::Toolkit* row(const std::string& version) {
  for (const auto& t : compat::toolkit_table())
    if (t.version.str() == version) return &t;
  return nullptr;
}

TEST(FrontAgainstNvcc, WhatTheFrontReadsIsWhatEachNvccEmbeds) {
  const auto found = toolkits();
  if (found.empty()) GTEST_SKIP() << "no nvcc here (/usr/local/cuda, ./toolchains)";
  TempDir dir{"orc-front-dryrun"};
  std::ofstream(dir.path() / "k.cu") << "__global__ void k() {}\n";
  // Archs every toolkit here accepts (11.8 to 13.0): 7.5 to 9.0.
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"-arch=sm_80"},
      {"-arch", "compute_86"},
      {"-arch=compute_80", "-code=sm_80,sm_86"},
      {"--gpu-architecture=compute_90", "--gpu-code=sm_90,compute_90"},
      {"-gencode", "arch=compute_75,code=sm_75", "-gencode=arch=compute_90,code=[sm_90,compute_90]"},
      {"--generate-code=arch=compute_80,code=[compute_80,sm_80]", "--generate-code=arch=compute_89,code=[sm_89]"},
      {"-arch=sm_80", "-gencode", "arch=compute_90,code=sm_90"},
      {"-arch=sm_90a"},
      {"-arch=compute_90a"},
  };
  int compared = 0;
  for (const auto& [version, root] : found) {
    const compat::Toolkit* t = row(version);
    ASSERT_NE(t, nullptr) << version;
    for (const auto& flags : cases) {
      // 11.8 has no arch-specific targets (sm_90a came with 12.0).
      if (version == "11.8" && !flags.empty() && flags.back().ends_with("a")) continue;
      std::vector<std::string> argv = {(root / "bin/nvcc").string(), "--dryrun", "-c", "k.cu", "-o", "k.o"};
      argv.insert(argv.end(), flags.begin(), flags.end());
      const auto ran = run_process(argv, dir.path());
      ASSERT_EQ(ran.exit_code, 0) << version << ": " << ran.output;
      const auto nvcc_says = front::targets_from_dryrun(ran.output);
      ASSERT_TRUE(nvcc_says) << version << ": " << ran.output;
      std::vector<std::string> args = {"-c", "k.cu", "-o", "k.o"};
      args.insert(args.end(), flags.begin(), flags.end());
      const front::NvccCall call = front::read_nvcc_call(args);
      const front::Targets read =
          call.choice == front::ArchChoice::nvcc_default ? front::default_targets(t->default_arch) : call.targets;
      EXPECT_EQ(front::describe(read), front::describe(*nvcc_says))
          << "nvcc " << version << " " << ::testing::PrintToString(flags);
      ++compared;
    }
  }
  std::cout << "compared " << compared << " command lines against nvcc --dryrun of " << found.size() << " toolkit(s)\n";
}

std::string all_errors(const app::BuildResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e + "\n";
  return out;
}

std::vector<const front::CallRecord*> calls_with(const app::BuildResult& r, front::Outcome outcome) {
  std::vector<const front::CallRecord*> out;
  if (r.nvcc)
    for (const auto& c : r.nvcc->calls)
      if (c.outcome == outcome) out.push_back(&c);
  return out;
}

// Fixture projects built on the host engine with one toolkit (a parameter:
// each one found), for tier-new: A100, RTX 4090, H100 -> sm_80 sm_89 sm_90
// + compute_90.
class FrontBuild : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const auto& [version, root] : toolkits())
      if (version == GetParam()) m_root = root;
    if (m_root.empty())
      GTEST_SKIP() << "no CUDA " << GetParam() << " here (./toolchains: scripts/install-cuda-toolkits.sh)";
    if (run_process({"cmake", "--version"}).exit_code != 0) GTEST_SKIP() << "cmake is not installed";
    ::setenv("ORCHESTRATE_HOST_TOOLKITS", m_root.c_str(), 1);
    ::setenv("ORCHESTRATE_CACHE_DIR", (m_dir.path() / "cache").c_str(), 1);
    ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir.path() / "keys").c_str(), 1);
    const std::string pinned = (k_fixtures / "pinned-cmake").string();
    const std::string probe = (k_fixtures / "probe-make").string();
    std::ofstream(m_dir.path() / "orchestrate.yaml")
        << "toolkits: [\"" << GetParam() << "\"]\n"
        << "tiers:\n  tier-new:\n    gpus: [\"A100\", \"RTX 4090\", \"H100\"]\n"
        << "recipes:\n"
        << "  - {name: pinned-verify, framework: cmake, source: {path: " << pinned
        << "}, tiers: [tier-new], artifacts: [pinned]}\n"
        << "  - {name: pinned-enforce, framework: cmake, nvcc: enforce, source: {path: " << pinned
        << "}, tiers: [tier-new], artifacts: [pinned]}\n"
        << "  - {name: probe, framework: nvcc, source: {path: " << probe
        << "}, tiers: [tier-new], build: [[make]], artifacts: [probe]}\n"
        << "  - {name: probe-75, framework: nvcc, env: {GPU_COMPUTE_CAPABILITY: \"75\"}, source: {path: " << probe
        << "}, tiers: [tier-new], build: [[make]], artifacts: [probe]}\n"
        << "  - {name: probe-75-enforce, framework: nvcc, nvcc: enforce, env: {GPU_COMPUTE_CAPABILITY: \"75\"}, "
           "source: {path: "
        << probe << "}, tiers: [tier-new], build: [[make]], artifacts: [probe]}\n";
  }
  void TearDown() override { ::unsetenv("GPU_COMPUTE_CAPABILITY"); }

  app::BuildResult build(const std::string& recipe) {
    std::ostringstream progress;
    const app::BuildReport report = build_on_host(m_dir.path(), "tier-new", recipe, progress);
    std::cout << cli::render_build_text(report, false) << cli::render_build_errors(report);
    if (report.builds.size() != 1) {
      ADD_FAILURE() << progress.str();
      return {};
    }
    return report.builds.front();
  }

  fs::path m_root;
  TempDir m_dir{"orc-front-build"};
};

TEST_P(FrontBuild, VerifyStopsAPinnedProjectAtItsFirstNvccCallNamingTheLine) {
  const app::BuildResult r = build("pinned-verify");
  ASSERT_EQ(r.status, app::BuildStatus::failed);
  EXPECT_EQ(r.exit_code, util::ExitCode::check_failed);
  ASSERT_FALSE(r.errors.empty());
  const std::string& e = r.errors.front();
  EXPECT_NE(e.find("CMakeLists.txt:7: nvcc was asked to compile"), std::string::npos) << e;
  EXPECT_NE(e.find("it sets them here: CMakeLists.txt:7: set(CMAKE_CUDA_ARCHITECTURES 75 80 86 89 90)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("not planned sm_75 sm_86 compute_75 compute_80 compute_86 compute_89"), std::string::npos) << e;
  EXPECT_NE(e.find("add `nvcc: enforce` to recipe 'pinned-verify'"), std::string::npos) << e;
  // Never the raw nvcc error this tool exists to prevent.
  EXPECT_EQ(all_errors(r).find("nvcc fatal"), std::string::npos) << all_errors(r);
  EXPECT_FALSE(r.manifest.has_value()) << "nothing is stored";
  EXPECT_EQ(calls_with(r, front::Outcome::refused).size(), 1u);
}

TEST_P(FrontBuild, EnforceBuildsExactlyThePlanForAPinnedProject) {
  const app::BuildResult r = build("pinned-enforce");
  ASSERT_EQ(r.status, app::BuildStatus::built) << all_errors(r);
  ASSERT_EQ(r.artifacts.size(), 1u);
  EXPECT_EQ(r.artifacts[0].sass.names(), (std::vector<std::string>{"sm_80", "sm_89", "sm_90"}));
  EXPECT_EQ(r.artifacts[0].ptx.names(), (std::vector<std::string>{"compute_90"}));
  const auto enforced = calls_with(r, front::Outcome::enforced);
  ASSERT_FALSE(enforced.empty());
  ASSERT_TRUE(enforced.front()->origin);
  EXPECT_EQ(enforced.front()->origin->str(), "CMakeLists.txt:7: set(CMAKE_CUDA_ARCHITECTURES 75 80 86 89 90)");
  EXPECT_EQ(front::describe(enforced.front()->asked),
            "sm_75 sm_80 sm_86 sm_89 sm_90 compute_75 compute_80 compute_86 compute_89 compute_90");
  EXPECT_TRUE(calls_with(r, front::Outcome::refused).empty());
  EXPECT_TRUE(r.warnings.empty()) << ::testing::PrintToString(r.warnings);
}

TEST_P(FrontBuild, AGpuProbeIsSaidOnceAndTheShellDoesNotReachTheBuild) {
  const app::BuildResult first = build("probe");
  ASSERT_EQ(first.status, app::BuildStatus::built) << all_errors(first);
  EXPECT_EQ(first.artifacts[0].sass.names(), (std::vector<std::string>{"sm_80", "sm_89", "sm_90"}));
  const auto summary = app::nvcc_summary(*first.nvcc);
  const auto probes = std::ranges::count_if(
      summary, [](const std::string& l) { return l.find("probed the build machine's GPU") != std::string::npos; });
  EXPECT_EQ(probes, 1) << ::testing::PrintToString(summary);
  // The user's shell held GPU_COMPUTE_CAPABILITY: the steps do not see it,
  // so the same key is a hit.
  ::setenv("GPU_COMPUTE_CAPABILITY", "75", 1);
  const app::BuildResult again = build("probe");
  EXPECT_EQ(again.status, app::BuildStatus::cached) << all_errors(again);
  EXPECT_EQ(again.key, first.key);
}

TEST_P(FrontBuild, EnvOfTheRecipeReachesTheStepAndVerifyNamesTheMakefile) {
  const app::BuildResult refused = build("probe-75");
  ASSERT_EQ(refused.status, app::BuildStatus::failed);
  const std::string& e = refused.errors.front();
  EXPECT_NE(e.find("Makefile:8: nvcc was asked to compile probe.cu for sm_75 sm_80 sm_89 sm_90 compute_90"),
            std::string::npos)
      << e;
  EXPECT_FALSE(refused.manifest.has_value());
  const app::BuildResult enforced = build("probe-75-enforce");
  ASSERT_EQ(enforced.status, app::BuildStatus::built) << all_errors(enforced);
  EXPECT_EQ(enforced.artifacts[0].sass.names(), (std::vector<std::string>{"sm_80", "sm_89", "sm_90"}));
  EXPECT_EQ(enforced.artifacts[0].ptx.names(), (std::vector<std::string>{"compute_90"}));
  EXPECT_NE(enforced.key, refused.key);
}

INSTANTIATE_TEST_SUITE_P(Toolkits, FrontBuild, ::testing::Values("13.0", "12.4", "11.8"),
                         [](const auto& info) { return "cuda" + std::string(info.param).replace(2, 1, ""); });

}  // namespace
}  // namespace orc::integration
