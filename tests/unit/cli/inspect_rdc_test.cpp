// Issue 27, "one meaning of embedded": for an -rdc build whose PTX the device
// link dropped (real nvcc 13.0 output), inspect's table, its --json and build
// verification name the same PTX as relocatable only, in the same words,
// with the change that fixes it. Skipped without nvcc 13.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/app/build/build_verify.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/inspect/verdict.hpp"
#include "tests/unit/cli/run_cli.hpp"
#include "tests/unit/inspect/nvcc_outputs.hpp"

namespace orc::cli {
namespace {

using testing::run_cli;

TEST(InspectRdc, TableJsonAndVerificationSayTheSame) {
  ORC_NVCC_OUTPUT(path, "rdc-ptx90");
  const std::string said = "PTX compute_90 is " + std::string(inspect::relocatable_only_why(true));

  const auto text = run_cli({"inspect", path.string()});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("compute_90*"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("* " + said), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(said), std::string::npos) << text.out;

  const auto json = run_cli({"inspect", path.string(), "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto file = nlohmann::json::parse(json.out)["files"][0];
  EXPECT_EQ(file["ptx"], nlohmann::json::array({"compute_90"}));  // every module's, as cuobjdump -all lists
  EXPECT_EQ(file["relocatable_only"]["ptx"], nlohmann::json::array({"compute_90"}));
  EXPECT_EQ(file["relocatable_only"]["sass"], nlohmann::json::array());
  EXPECT_EQ(file["relocatable_only"]["notes"], nlohmann::json::array({said}));

  const auto reports = inspect::inspect_files({path}, {.threads = 1, .modules = true});
  const auto v = app::verify_artifacts(arch::ArchSet{.sass = {{9, 0}}, .ptx = {{9, 0}}},
                                       {{.name = "H100", .cc = {9, 0}}}, reports);
  EXPECT_TRUE(v.ok()) << v.errors.at(0);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_EQ(v.warnings[0], path.string() + ": planned " + said);
}

TEST(InspectRdc, APlainBuildHasNoRelocatableNote) {
  ORC_NVCC_OUTPUT(path, "t75");
  const auto json = run_cli({"inspect", path.string(), "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_TRUE(nlohmann::json::parse(json.out)["files"][0]["relocatable_only"].is_null());
  const auto text = run_cli({"inspect", path.string()}).out;
  EXPECT_EQ(text.find("relocatable"), std::string::npos) << text;
  EXPECT_EQ(text.find('*'), std::string::npos) << text;
}

}  // namespace
}  // namespace orc::cli
