// orchestrate doctor's verdicts and the node's driver (its framework
// discovery, rendered, is in tests/unit/cli/doctor_render_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "orchestrator/app/doctor/doctor.hpp"
#include "orchestrator/site/driver_facts.hpp"
#include "orchestrator/util/process.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

TEST(Doctor, UnknownComputeCapabilityIsNotGuessed) {
  inspect::FileReport file;
  file.modules.push_back({.section = inspect::CodeSection::executable, .sass = {{8, 0}, {9, 0}}});
  const auto v = judge_library(file,
                               {{.name = "H200", .cc = {9, 0}, .architecture = "Hopper"},
                                {.name = "A10", .cc = {8, 6}, .architecture = "Ampere"},
                                {.name = "future", .cc = {9, 9}, .architecture = ""}},
                               "580.65.06");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].outcome, "native");
  EXPECT_EQ(v[1].outcome, "native");  // sm_80 SASS loads on 8.6
  EXPECT_EQ(v[2].outcome, "unknown");
  EXPECT_EQ(v[2].gpu, 2u);
  EXPECT_EQ(v[2].cc.dotted(), "9.9");
}

// CUDA forward compatibility: the user-space driver serves a newer CUDA than
// the kernel module's release; the newer one is what compiles PTX.
TEST(Doctor, TheNodeDriverIsTheNewerOfTheModuleAndTheUserSpaceCuda) {
  EXPECT_EQ(site::node_driver("580.159.04", 13000), *util::Version::parse("580.159.04"));
  EXPECT_EQ(site::node_driver("550.54.14", 13000), *util::Version::parse("580.65.06"));
  EXPECT_EQ(site::node_driver("", 12040), *util::Version::parse("550.54.14"));
  EXPECT_FALSE(site::node_driver("", 0).has_value());
}

}  // namespace
}  // namespace orc::app
