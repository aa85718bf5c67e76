// Bazel for real (Debian's bazel-bootstrap 4.2.3, offline with the local stub
// repositories of environment.md section 6): the bazel-workspace fixture's
// repository rule reads TF_CUDA_COMPUTE_CAPABILITIES from the environment and
// its genrule compiles a kernel with nvcc 13.0 for those archs.
//   - Plain bazel: a change of archs leaves the old archs in the output (the
//     repository rule is not re-run), as inspect proves; clean --expunge fixes it.
//   - `orchestrate build` (host engine): a change of archs cleans exactly once,
//     a rebuild with the same archs does not clean, and the output holds the
//     new archs.
//   - The tensorflow driver's .bazelrc lines win over the workspace's own
//     `build:cuda --repo_env=HERMETIC_CUDA_VERSION=...` pin, by bazel's
//     --announce_rc and by what the repository rule saw.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/build/build_drivers.hpp"
#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/util/fs.hpp"
#include "tests/integration/host_build.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_nvcc = "/usr/local/cuda/bin/nvcc";

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool has_bazel() { return run_process({"bazel", "--version"}).exit_code == 0; }

// The stub repositories Bazel 4.2.3 needs offline, under `dir`, and the rc
// lines that point at them (environment.md section 6).
std::string write_stubs(const fs::path& dir) {
  const auto put = [](const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  };
  const auto forward = [](std::initializer_list<const char*> rules) {
    std::string out;
    for (const char* r : rules) out += std::string("def ") + r + "(**kw): native." + r + "(**kw)\n";
    return out;
  };
  put(dir / "rules_cc/WORKSPACE", "");
  put(dir / "rules_cc/BUILD", "");
  put(dir / "rules_cc/cc/BUILD", "exports_files([\"defs.bzl\"])\n");
  put(dir / "rules_cc/cc/defs.bzl", forward({"cc_binary", "cc_library", "cc_test", "cc_import", "cc_toolchain",
                                             "cc_toolchain_suite", "objc_library"}));
  put(dir / "rules_java/WORKSPACE", "");
  put(dir / "rules_java/BUILD", "");
  put(dir / "rules_java/java/BUILD", "exports_files([\"defs.bzl\"])\n");
  put(dir / "rules_java/java/defs.bzl",
      forward({"java_binary", "java_import", "java_library", "java_runtime", "java_toolchain", "java_test"}));
  put(dir / "coverage/WORKSPACE", "");
  put(dir / "coverage/gen.sh", "#!/bin/sh\nexit 0\n");
  fs::permissions(dir / "coverage/gen.sh", fs::perms::owner_all);
  put(dir / "coverage/BUILD",
      "package(default_visibility=[\"//visibility:public\"])\n"
      "sh_binary(name=\"coverage_report_generator\", srcs=[\"gen.sh\"])\n"
      "filegroup(name=\"lcov_merger\", srcs=[\"gen.sh\"])\n");
  return "common --override_repository=rules_cc=" + (dir / "rules_cc").string() +
         "\ncommon --override_repository=rules_java=" + (dir / "rules_java").string() +
         "\ncommon --override_repository=remote_coverage_tools=" + (dir / "coverage").string() + "\n";
}

class Bazel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_bazel()) GTEST_SKIP() << "no bazel here (Debian's bazel-bootstrap: scripts/install-deps.sh --test)";
    if (::access(k_nvcc, X_OK) != 0) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda here";
    m_ws = m_dir.path() / "ws";
    fs::copy(fs::path(ORC_SOURCE_DIR) / "tests/integration/bazel-workspace", m_ws, fs::copy_options::recursive);
    std::ofstream(m_ws / "stubs.bazelrc") << write_stubs(m_dir.path() / "stubs");
    fs::create_directories(m_dir.path() / "bazel-root");
  }

  // bazel in the workspace, its output root in the temp directory (bazel
  // reads TEST_TMPDIR as its output_user_root), `env` on top.
  ProcessResult bazel(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {"env", "TEST_TMPDIR=" + (m_dir.path() / "bazel-root").string(),
                                     "CUDA_HOME=/usr/local/cuda"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back("bazel");
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_process(argv, m_ws);
    if (r.exit_code != 0) std::cout << quoted(argv) << "\n" << r.output;
    return r;
  }

  std::set<arch::ComputeCapability> sass_of(const fs::path& file) {
    auto reports = inspect::inspect_files({file}, {.modules = true});
    EXPECT_FALSE(reports.at(0).error) << *reports.at(0).error;
    return reports.at(0).sass;
  }

  TempDir m_dir{"orc-bazel"};
  fs::path m_ws;
};

const arch::ComputeCapability k_sm80{8, 0};
const arch::ComputeCapability k_sm90{9, 0};

TEST_F(Bazel, WithoutOrchestrateAChangeOfArchsLeavesTheOldArchsInTheOutput) {
  ASSERT_EQ(bazel({"build", "//:kernel"}, {"TF_CUDA_COMPUTE_CAPABILITIES=sm_80"}).exit_code, 0);
  EXPECT_EQ(sass_of(m_ws / "bazel-bin/kernel.o"), std::set{k_sm80});
  // The archs change; bazel keeps the repository its rule made for sm_80.
  ASSERT_EQ(bazel({"build", "//:kernel"}, {"TF_CUDA_COMPUTE_CAPABILITIES=sm_90"}).exit_code, 0);
  EXPECT_EQ(sass_of(m_ws / "bazel-bin/kernel.o"), std::set{k_sm80}) << "bazel re-ran the repository rule";
  ASSERT_EQ(bazel({"clean", "--expunge"}).exit_code, 0);
  ASSERT_EQ(bazel({"build", "//:kernel"}, {"TF_CUDA_COMPUTE_CAPABILITIES=sm_90"}).exit_code, 0);
  EXPECT_EQ(sass_of(m_ws / "bazel-bin/kernel.o"), std::set{k_sm90});
}

class BazelBuild : public Bazel {
 protected:
  void SetUp() override {
    Bazel::SetUp();
    if (IsSkipped()) return;
    ::setenv("ORCHESTRATE_HOST_TOOLKITS", "/usr/local/cuda", 1);
    ::setenv("ORCHESTRATE_CACHE_DIR", (m_dir.path() / "cache").c_str(), 1);
    ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir.path() / "keys").c_str(), 1);
  }
  void TearDown() override {
    for (const char* name : {"ORCHESTRATE_HOST_TOOLKITS", "ORCHESTRATE_CACHE_DIR", "ORCHESTRATE_KEYS_DIR"})
      ::unsetenv(name);
  }
  void configure(const std::string& gpu) {
    std::ofstream(m_dir.path() / "orchestrate.yaml")
        << "toolkits: [\"13.0\"]\ntiers:\n  t:\n    gpus: [\"" << gpu
        << "\"]\nrecipes:\n  - name: ops\n    framework: tensorflow\n    source: {path: " << m_ws.string()
        << "}\n    tiers: [t]\n    build:\n"
           "      - [bazel, build, --config=cuda, --announce_rc, \"//:kernel\"]\n"
           "      - [cp, -L, bazel-bin/kernel.o, /build/kernel.o]\n"
           "    artifacts: [kernel.o]\n";
  }
  struct Built {
    app::BuildResult result;
    std::string log;
  };
  Built build() {
    std::ostringstream progress;
    const app::BuildReport report = build_on_host(m_dir.path(), "t", "ops", progress);
    EXPECT_EQ(report.builds.size(), 1u) << progress.str();
    if (report.builds.empty()) return {};
    Built b{.result = report.builds.front(), .log = read(report.builds.front().log_file)};
    if (b.result.status == app::BuildStatus::failed) std::cout << progress.str() << b.log;
    return b;
  }
};

constexpr std::string_view k_expunge = "running 'bazel clean --expunge' first";

TEST_F(BazelBuild, AChangeOfArchsCleansExactlyOnceAndTheOutputHoldsTheNewArchs) {
  configure("A100");
  Built first = build();
  ASSERT_EQ(first.result.status, app::BuildStatus::built) << first.log;
  EXPECT_EQ(first.log.find(k_expunge), std::string::npos) << "a workspace never configured needs no clean";
  EXPECT_EQ(first.result.artifacts.at(0).sass.names(), std::vector<std::string>{"sm_80"});
  // bazel read the plan's lines that the driver appended to .bazelrc.
  EXPECT_NE(first.log.find("--repo_env=TF_CUDA_COMPUTE_CAPABILITIES=compute_80"), std::string::npos) << first.log;

  configure("H100");
  Built changed = build();
  ASSERT_EQ(changed.result.status, app::BuildStatus::built) << changed.log;
  EXPECT_NE(changed.log.find(k_expunge), std::string::npos) << changed.log;
  EXPECT_EQ(changed.result.artifacts.at(0).sass.names(), std::vector<std::string>{"sm_90"});
  EXPECT_EQ(changed.result.artifacts.at(0).ptx.names(), std::vector<std::string>{"compute_90"});

  // The same archs, a changed source: a rebuild, and no clean.
  std::ofstream(m_ws / "kernel.cu", std::ios::app) << "__global__ void twice(float* x) { x[threadIdx.x] *= 2; }\n";
  Built again = build();
  ASSERT_EQ(again.result.status, app::BuildStatus::built) << again.log;
  EXPECT_EQ(again.log.find(k_expunge), std::string::npos) << again.log;
  EXPECT_EQ(again.result.artifacts.at(0).sass.names(), std::vector<std::string>{"sm_90"});
}

// The driver's .bazelrc for a hermetic TensorFlow plan (>=2.18: its tested
// 12.5, HERMETIC_CUDA_VERSION 12.5.1) against the workspace's own pin
// (12.3.2, as TensorFlow's .bazelrc pinned in an earlier revision).
TEST_F(Bazel, TheDriversBazelrcLinesWinOverTheWorkspacesOwnPin) {
  std::ofstream(m_dir.path() / "orchestrate.yaml")
      << "tiers:\n  t:\n    gpus: [A100]\nrecipes:\n  - name: tf\n    framework: tensorflow\n"
         "    source: {path: "
      << m_ws.string() << "}\n    requires: {tensorflow: \">=2.18\"}\n    tiers: [t]\n";
  ::setenv("ORCHESTRATE_HOST_CUDA", (m_dir.path() / "no-cuda").c_str(), 1);
  const app::PlanReport report = app::plan({.config = m_dir.path() / "orchestrate.yaml", .tiers = {}, .recipes = {}});
  ::unsetenv("ORCHESTRATE_HOST_CUDA");
  const app::PlanEntry& entry = report.plans.at(0);
  ASSERT_TRUE(entry.ok) << entry.reasons.at(0);
  const auto driver = app::plan_driver(
      {.plan = &entry, .recipe = entry.recipe, .source_dir = m_ws, .workspace = m_dir.path() / "orc-ws"});
  ASSERT_TRUE(driver) << driver.error();
  for (const auto& f : driver->files) std::ofstream(m_ws / f.relative) << f.text;
  const auto r = bazel({"build", "--config=cuda", "--announce_rc", "//:hermetic"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // --announce_rc: the workspace's pin, then ours for the same config, later.
  const std::string heading = "build:cuda in file " + (m_ws / ".bazelrc").string() + ": ";
  const auto at = r.output.find(heading);
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  const auto theirs = line.find("--repo_env=HERMETIC_CUDA_VERSION=12.3.2");
  const auto ours = line.find("--repo_env=HERMETIC_CUDA_VERSION=12.5.1");
  ASSERT_NE(theirs, std::string::npos) << line;
  ASSERT_NE(ours, std::string::npos) << line;
  EXPECT_LT(theirs, ours) << line;
  EXPECT_NE(r.output.find("cuda_configure: TF_CUDA_COMPUTE_CAPABILITIES=compute_80 HERMETIC_CUDA_VERSION=12.5.1"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(read(m_ws / "bazel-bin/hermetic.txt"), "HERMETIC_CUDA_VERSION=12.5.1\n");
}

}  // namespace
}  // namespace orc::integration
