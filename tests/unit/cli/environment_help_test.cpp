// `orchestrate --help` ends with util/env's table of environment variables;
// a subcommand's help does not repeat it.
#include <gtest/gtest.h>

#include "orchestrator/util/env.hpp"
#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

using testing::run_cli;

TEST(EnvironmentHelp, MainHelpListsEveryVariable) {
  const auto r = run_cli({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find(util::render_environment_help()), std::string::npos) << r.out;
  for (const auto& v : util::environment_variables())
    EXPECT_NE(r.out.find("  " + std::string(v.name) + " "), std::string::npos) << v.name;
}

TEST(EnvironmentHelp, SubcommandHelpStaysShort) {
  const auto r = run_cli({"plan", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.find("Environment variables orchestrate reads"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace orc::cli
