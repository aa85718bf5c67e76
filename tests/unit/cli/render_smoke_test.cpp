// `orchestrate smoke`'s result as the command line prints it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/cli/render.hpp"
#include "tests/unit/smoke/smoke_fixture.hpp"

namespace orc::cli {
namespace {

using namespace smoke;
using smoke::fixtures::passing;

TEST(SmokeRender, JsonShapeAndText) {
  const auto j = nlohmann::json::parse(render_smoke_json(passing()));
  EXPECT_EQ(j["driver"]["cuda"], "13.0");
  EXPECT_EQ(j["driver"]["version"], "580.159.04");
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["gpus"][0]["cc"], "9.0");
  EXPECT_EQ(j["gpus"][0]["load"]["outcome"], "native");
  EXPECT_EQ(j["gpus"][0]["kernels"][1]["status"], "skipped");
  const std::string text = render_smoke_text(passing());
  EXPECT_NE(text.find("GPU 0: NVIDIA H200 (CC 9.0)\n  load: native"), std::string::npos) << text;
  EXPECT_NE(text.find("smoke: passed"), std::string::npos);
  EXPECT_EQ(render_smoke_text({.driver_error = "no NVIDIA driver on this machine (x)"}),
            "smoke: no NVIDIA driver on this machine (x)\n");
}

// Modules that cannot fail a launch are shown, with why they do not decide.
TEST(SmokeRender, ModulesThatCannotFailALaunchSayWhy) {
  SmokeResult r = passing();
  r.gpus[0].artifacts.push_back(
      {.where = "app .nv_fatbin[0]", .predicted = "none", .load = {.outcome = LoadOutcome::none}, .kernels = false});
  r.gpus[0].artifacts.push_back({.where = "librdc.so .nv_fatbin[0]",
                                 .predicted = "none",
                                 .load = {.outcome = LoadOutcome::none},
                                 .kernels = true,
                                 .relinked = true});
  const std::string text = render_smoke_text(r);
  EXPECT_NE(text.find("(no kernel entry point: does not decide)"), std::string::npos) << text;
  EXPECT_NE(text.find("(predicted, not loaded here: the runtime links __nv_relfatbin's images for this GPU instead; "
                      "does not decide)"),
            std::string::npos);
}

}  // namespace
}  // namespace orc::cli
