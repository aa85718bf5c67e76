// `plan` marks an offline image this machine has not built (no record of
// `images build` in the state file) and names the command that builds it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/site/image_state.hpp"
#include "tests/unit/cli/cli_fixture.hpp"
#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

using testing::CliTest;
using testing::k_config;
using testing::run_cli;
using testing::ScopedEnv;

TEST_F(CliTest, PlanMarksAnOfflineImageNotBuiltHere) {
  const auto config = write("orchestrate.yaml", k_config);
  const ScopedEnv cache("ORCHESTRATE_CACHE_DIR", (m_dir / "cache").string());
  const ScopedEnv host("ORCHESTRATE_HOST_CUDA", (m_dir / "no-cuda").string());

  auto r = run_cli({"plan", "tier-new", "-f", config, "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plans"][0]["image"], "orchestrate/cuda:12.4-trixie");
  EXPECT_EQ(j["plans"][0]["image_built"], false);
  EXPECT_EQ(j["plans"][0]["image_build"], "orchestrate images build 12.4-trixie");
  // tf wants 12.5, which only an official tag carries: no image shown, nothing to build.
  EXPECT_TRUE(j["plans"][1]["image"].is_null()) << j["plans"][1].dump(2);
  EXPECT_TRUE(j["plans"][1]["image_built"].is_null());
  EXPECT_TRUE(j["plans"][1]["image_build"].is_null());
  r = run_cli({"plan", "tier-new", "-f", config});
  EXPECT_NE(r.out.find("\n    image: orchestrate/cuda:12.4-trixie (not built here: orchestrate images build "
                       "12.4-trixie)\n"),
            std::string::npos)
      << r.out;

  // Once `images build` has recorded it, the plan names the image alone.
  site::save_image_record(site::image_state_path(), site::ImageRecord{.name = "12.4-trixie",
                                                                      .reference = "orchestrate/cuda:12.4-trixie",
                                                                      .id = "sha256:" + std::string(64, 'a'),
                                                                      .toolkit = "12.4.131"});
  r = run_cli({"plan", "tier-new", "-f", config, "--json"});
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plans"][0]["image_built"], true);
  EXPECT_TRUE(j["plans"][0]["image_build"].is_null());
  r = run_cli({"plan", "tier-new", "-f", config});
  EXPECT_NE(r.out.find("\n    image: orchestrate/cuda:12.4-trixie\n"), std::string::npos) << r.out;

  // An official tag is pulled, not built here.
  const ScopedEnv official("ORCHESTRATE_IMAGE_PREFERENCE", "official");
  r = run_cli({"plan", "tier-new", "-f", config, "--json"});
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plans"][0]["image"], "docker.io/nvidia/cuda:13.0.3-cudnn-devel-ubuntu22.04");
  EXPECT_TRUE(j["plans"][0]["image_built"].is_null());
  EXPECT_TRUE(j["plans"][0]["image_build"].is_null());
}

}  // namespace
}  // namespace orc::cli
