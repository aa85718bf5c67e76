// --json as scripts read it: null for what is unknown (never a placeholder
// such as "sm_0", "" or 0), and one field per fact (never "tier: name (cc)").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/unit/cli/cli_fixture.hpp"
#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

using testing::CliTest;
using testing::fatbin;
using testing::k_config;
using testing::run_cli;

TEST_F(CliTest, ToolkitsJsonHasNullWhereTheTableKnowsNothing) {
  const auto r = run_cli({"toolkits", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool seen = false;
  for (const auto& row : j) {
    for (const char* key : {"default_arch", "min_driver", "max_gcc", "max_clang"}) {
      EXPECT_NE(row[key], "sm_0") << row["version"];
      EXPECT_NE(row[key], "") << row["version"] << " " << key;
      EXPECT_NE(row[key], 0) << row["version"] << " " << key;
    }
    if (row["version"] != "12.7") continue;
    seen = true;
    EXPECT_EQ(row["released"], false);
    for (const char* key : {"default_arch", "min_driver", "max_gcc", "max_clang"})
      EXPECT_TRUE(row[key].is_null()) << key << ": " << row[key];
  }
  EXPECT_TRUE(seen);
}

TEST_F(CliTest, InspectVerdictsNameTheTierTheGpuAndTheCcApart) {
  const auto sm80 = write("sm80.fatbin", fatbin({{2, 80, 0x11}}));
  const auto config = write("orchestrate.yaml", k_config);
  const auto r =
      run_cli({"inspect", sm80, "--gpu", "H200", "--cc", "8.6", "--tier", "tier-new", "-f", config, "--json"});
  const auto verdicts = nlohmann::json::parse(r.out)["files"][0]["verdicts"];
  ASSERT_EQ(verdicts.size(), 6u) << r.out;
  EXPECT_TRUE(verdicts[0]["tier"].is_null());
  EXPECT_EQ(verdicts[0]["name"], "H200");
  EXPECT_EQ(verdicts[0]["cc"], "9.0");
  EXPECT_TRUE(verdicts[1]["tier"].is_null());
  EXPECT_TRUE(verdicts[1]["name"].is_null());
  EXPECT_EQ(verdicts[1]["cc"], "8.6");
  EXPECT_EQ(verdicts[2]["tier"], "tier-new");
  EXPECT_EQ(verdicts[2]["name"], "A100");
  EXPECT_EQ(verdicts[2]["cc"], "8.0");
  EXPECT_FALSE(verdicts[2].contains("gpu"));  // no fused label
}

}  // namespace
}  // namespace orc::cli
