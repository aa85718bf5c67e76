// Toolkit discovery against the real trees: the toolkits
// scripts/install-cuda-toolkits.sh unpacks into ./toolchains (or
// $ORC_TOOLCHAINS) and CUDA 13.0 at /usr/local/cuda. Each found toolkit's
// inventory is printed; every toolkit the script installs, and 13.0, must
// be complete and have cuBLAS; and each complete one with cuBLAS must build
// tests/integration/cublas-project (FindCUDAToolkit + CUDA::cublas + a
// cooperative_groups kernel) with the real cmake. Without ./toolchains the
// suite skips with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "orchestrator/site/host_toolkits.hpp"
#include "orchestrator/util/strings.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using compat::ToolkitPart;

fs::path toolchains_dir() { return env_or("ORC_TOOLCHAINS", ORC_SOURCE_DIR "/toolchains"); }

std::vector<site::HostToolkit> discovered() {
  site::HostToolkitSearch search;
  search.listed = {toolchains_dir()};
  search.default_root = env_or("ORCHESTRATE_HOST_CUDA", "/usr/local/cuda");
  return site::discover_host_toolkits(search);
}

// The layout the install script writes into each tree it unpacked.
int script_layout(const fs::path& root) {
  std::ifstream in(root / ".orc-toolkit");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("layout: ")) return std::stoi(line.substr(8));
  return 0;
}

class Toolkits : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::is_directory(toolchains_dir()))
      GTEST_SKIP() << toolchains_dir() << " is absent: run scripts/install-cuda-toolkits.sh (or set ORC_TOOLCHAINS)";
    m_found = discovered();
    for (const auto& t : m_found) {
      std::cout << t.version.str() << " " << t.root.string() << " (" << t.found_by << "): ";
      std::vector<std::string> lacks;
      for (const auto& m : t.inventory.missing) lacks.push_back(m.describe());
      std::cout << (lacks.empty() ? "lacks nothing" : "lacks " + util::join(lacks, ", ")) << "\n";
    }
  }
  std::vector<site::HostToolkit> m_found;
};

TEST_F(Toolkits, WhatTheScriptInstallsAndThirteenAreCompleteWithCublas) {
  const std::vector<ToolkitPart> cublas = {ToolkitPart::cublas};
  int checked = 0;
  for (const auto& t : m_found) {
    const bool ours = script_layout(t.root) >= 3;
    const bool thirteen = t.version.major() == 13;
    if (!ours && !thirteen) continue;
    ++checked;
    EXPECT_TRUE(t.inventory.lacking(compat::parts_needed(cublas)).empty())
        << t.root << " lacks " << compat::describe_missing(t.inventory.lacking(compat::parts_needed(cublas)));
  }
  EXPECT_GT(checked, 0) << "no toolkit of layout 3 under " << toolchains_dir() << " and no CUDA 13";
}

TEST_F(Toolkits, EveryCompleteToolkitWithCublasBuildsACublasProject) {
  const std::vector<ToolkitPart> cublas = {ToolkitPart::cublas};
  int built = 0;
  for (const auto& t : m_found) {
    const auto lacking = t.inventory.lacking(compat::parts_needed(cublas));
    if (!lacking.empty()) {
      std::cout << "not built with " << t.root.string() << ": lacks " << compat::describe_missing(lacking) << "\n";
      continue;
    }
    const TempDir dir("orc-toolkits-cublas");
    const std::vector<std::string> configure = {ORC_CMAKE_COMMAND,
                                                "-S",
                                                ORC_SOURCE_DIR "/tests/integration/cublas-project",
                                                "-B",
                                                dir.path().string(),
                                                "-G",
                                                "Ninja",
                                                "-DCMAKE_CUDA_COMPILER=" + (t.root / "bin" / "nvcc").string(),
                                                "-DCUDAToolkit_ROOT=" + t.root.string()};
    const ProcessResult configured = run_process(configure);
    ASSERT_EQ(configured.exit_code, 0) << quoted(configure) << "\n" << configured.output;
    EXPECT_NE(configured.output.find("Found CUDAToolkit"), std::string::npos) << configured.output;
    const std::vector<std::string> build = {ORC_CMAKE_COMMAND, "--build", dir.path().string()};
    const ProcessResult made = run_process(build);
    ASSERT_EQ(made.exit_code, 0) << t.root << "\n" << made.output;
    EXPECT_TRUE(fs::exists(dir.path() / "probe"));
    ++built;
  }
  EXPECT_GT(built, 0) << "no complete toolkit with cuBLAS was found";
}

}  // namespace
}  // namespace orc::integration
