// app::build with the host engine and a toolkit whose nvcc only says its
// version: a step that fails, with and without --keep-failed; a host that
// lacks the toolkit the configuration needs; what the report says it used.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/cli/render.hpp"
#include "tests/unit/fake_toolkit.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

class BuildHost : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-build-host-unit-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir / "src");
    toolkit("13.0");
    ::setenv("ORCHESTRATE_HOST_TOOLKITS", (m_dir / "cuda").c_str(), 1);
    ::setenv("ORCHESTRATE_HOST_CUDA", (m_dir / "cuda").c_str(), 1);
    ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir / "keys").c_str(), 1);
    write_config("13.0");
  }
  void TearDown() override {
    for (const char* name : {"ORCHESTRATE_HOST_TOOLKITS", "ORCHESTRATE_HOST_CUDA", "ORCHESTRATE_KEYS_DIR"})
      ::unsetenv(name);
    fs::remove_all(m_dir);
  }
  void toolkit(const std::string& version) {
    fs::create_directories(m_dir / "cuda" / "bin");
    std::ofstream(m_dir / "cuda" / "bin" / "nvcc")
        << "#!/bin/sh\necho 'Cuda compilation tools, release " << version << ", V" << version << ".88'\n";
    fs::permissions(m_dir / "cuda" / "bin" / "nvcc", fs::perms::owner_all);
    orc::unit::fake_toolkit_parts(m_dir / "cuda");  // complete (issue 27), so it is planned with
  }
  void write_config(const std::string& toolkits) {
    std::ofstream(m_dir / "orchestrate.yaml") << "toolkits: [\"" << toolkits << "\"]\n"
                                              << "tiers:\n  tier-h:\n    gpus: [H100]\n  idle:\n    gpus: [A100]\n"
                                              << "recipes:\n  - name: broken\n    framework: nvcc\n"
                                              << "    source: {path: src}\n    tiers: [tier-h]\n"
                                              << "    build: [[sh, -c, 'echo compiling; exit 1']]\n"
                                              << "    artifacts: [k.o]\n";
  }
  BuildResult run(bool keep_failed) {
    const BuildReport report = build(BuildRequest{.config = m_dir / "orchestrate.yaml",
                                                  .tiers = {"tier-h"},
                                                  .recipes = {},
                                                  .engine = engine::EngineKind::host,
                                                  .jobs = 1,
                                                  .explain = false,
                                                  .store_root = m_dir / "store",
                                                  .terminal = false,
                                                  .keep_failed = keep_failed},
                                     m_progress);
    EXPECT_EQ(report.builds.size(), 1u);
    m_report = report;
    return report.builds.empty() ? BuildResult{} : report.builds.front();
  }
  fs::path m_dir;
  std::ostringstream m_progress;
  BuildReport m_report;
};

TEST_F(BuildHost, AFailedBuildKeepsItsTreeOnlyWhenAskedAndTheErrorNamesIt) {
  const BuildResult removed = run(false);
  EXPECT_EQ(removed.exit_code, util::ExitCode::check_failed);
  ASSERT_EQ(removed.errors.size(), 1u);
  EXPECT_NE(removed.errors[0].find("is removed; --keep-failed keeps it"), std::string::npos) << removed.errors[0];
  EXPECT_TRUE(removed.kept_tree.empty());
  // The log lines were streamed on the console already: not again in the error.
  EXPECT_NE(m_progress.str().find("[broken/tier-h] compiling"), std::string::npos) << m_progress.str();
  EXPECT_EQ(removed.errors[0].find("compiling"), std::string::npos) << removed.errors[0];

  const BuildResult kept = run(true);
  EXPECT_EQ(kept.exit_code, util::ExitCode::check_failed);
  ASSERT_FALSE(kept.kept_tree.empty());
  EXPECT_TRUE(fs::is_directory(fs::path(kept.kept_tree) / "src")) << kept.kept_tree;
  EXPECT_NE(kept.errors.at(0).find("the build tree is kept at " + kept.kept_tree), std::string::npos) << kept.errors[0];
  EXPECT_NE(cli::render_build_text(m_report, false).find("build tree kept at " + kept.kept_tree), std::string::npos);
  const auto j = nlohmann::json::parse(cli::render_build_json(m_report));
  EXPECT_EQ(j["builds"][0]["kept_tree"], kept.kept_tree);
}

TEST_F(BuildHost, EveryReportSaysTheToolkitImageAndEngineItUsed) {
  const BuildResult r = run(false);
  ASSERT_TRUE(r.toolkit);
  EXPECT_EQ(r.toolkit->str(), "13.0.88");
  EXPECT_EQ(r.image, "host");
  const auto j = nlohmann::json::parse(cli::render_build_json(m_report));
  EXPECT_EQ(j["builds"][0]["toolkit"], "13.0.88");
  EXPECT_EQ(j["builds"][0]["image"], "host");
  EXPECT_TRUE(j["builds"][0]["image_made"].is_null()) << "no image: key, none made";
  EXPECT_EQ(j["builds"][0]["engine"], "host");
  EXPECT_NE(cli::render_build_text(m_report, false).find("with CUDA 13.0.88 in host (host)"), std::string::npos)
      << cli::render_build_text(m_report, false);
  // The configuration's warnings are in the JSON too, as stderr said them once.
  ASSERT_EQ(j["warnings"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["warnings"][0]["message"], "orchestrate: warning: " + (m_dir / "orchestrate.yaml").string() +
                                             ":5:3: tier 'idle' is not used by any recipe");
  EXPECT_NE(m_progress.str().find("tier 'idle' is not used"), std::string::npos) << m_progress.str();
  // Errors are not in the text report (stdout): they go to stderr in the one format.
  EXPECT_EQ(cli::render_build_text(m_report, false).find("error"), std::string::npos);
  EXPECT_TRUE(cli::render_build_errors(m_report).starts_with("orchestrate: error: broken x tier-h: step 1 (sh) exited"))
      << cli::render_build_errors(m_report);
}

// 12.8 is configured; this host has the fake 12.4 (and whatever
// /usr/local/cuda-* holds, never 12.8 on these machines).
TEST_F(BuildHost, AHostWithoutTheNeededToolkitIsAnOutsideFailure) {
  if (fs::exists("/usr/local/cuda-12.8")) GTEST_SKIP() << "this host has /usr/local/cuda-12.8";
  toolkit("12.4");
  write_config("12.8");
  const BuildResult r = run(false);
  EXPECT_EQ(r.exit_code, util::ExitCode::outside_failure) << r.errors.at(0);
  EXPECT_NE(r.errors.at(0).find("it would use CUDA 12.8"), std::string::npos) << r.errors[0];
  const auto j = nlohmann::json::parse(cli::render_build_json(m_report));
  EXPECT_TRUE(j["builds"][0]["toolkit"].is_null());
  EXPECT_TRUE(j["builds"][0]["key"].is_null());
}

}  // namespace
}  // namespace orc::app
