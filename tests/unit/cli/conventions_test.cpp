// The conventions every command shares, as a user meets them: one value per
// flag occurrence (repeat the flag for more, as docker and pip do), so a
// repeatable flag never swallows the positionals after it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/util/strings.hpp"

#include "tests/unit/cli/cli_fixture.hpp"
#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

using testing::CliTest;
using testing::fake_host_cuda;
using testing::fatbin;
using testing::k_config;
using testing::run_cli;
using testing::ScopedEnv;

TEST_F(CliTest, InspectRepeatableFlagsLeaveThePositionalsFiles) {
  const auto a = write("a.fatbin", fatbin({{2, 80, 0x11}}));
  const auto b = write("b.fatbin", fatbin({{2, 90, 0x11}}));
  const auto config = write("orchestrate.yaml", k_config);
  for (const std::string flag : {"--tier", "--gpu", "--cc"}) {
    const std::string value = flag == "--tier" ? "tier-new" : flag == "--gpu" ? "H200" : "9.0";
    const auto r = run_cli({"inspect", flag, value, a, b, "-f", config, "--json"});
    ASSERT_NE(r.code, 2) << flag << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["files"].size(), 2u) << flag;
    EXPECT_EQ(j["files"][0]["path"], a);
    EXPECT_EQ(j["files"][1]["path"], b);
  }
  // Repeated, each occurrence adds one.
  const auto both = write("both.fatbin", fatbin({{2, 80, 0x11}, {2, 90, 0x11}}));
  const auto r = run_cli({"inspect", "--cc", "8.0", "--cc", "9.0", both, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["files"][0]["verdicts"].size(), 2u);
}

TEST_F(CliTest, PlanRecipeFlagLeavesThePositionalsTiers) {
  const auto config = write("orchestrate.yaml", k_config);
  const auto host = fake_host_cuda(m_dir / "cuda", "13.0");
  const auto r = run_cli({"plan", "-r", "ext", "tier-new", "-f", config, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto plans = nlohmann::json::parse(r.out)["plans"];
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0]["recipe"], "ext");
  EXPECT_EQ(plans[0]["tier"], "tier-new");
  const auto two = run_cli({"plan", "-r", "ext", "-r", "tf", "tier-new", "-f", config, "--json"});
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_EQ(nlohmann::json::parse(two.out)["plans"].size(), 2u);
}

TEST_F(CliTest, BuildRecipeFlagLeavesThePositionalsTiers) {
  const auto config = write("orchestrate.yaml", k_config);
  // The tier is taken as the tier: the error names the recipe only.
  const auto r = run_cli({"build", "-r", "nosuch", "tier-new", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no recipe 'nosuch'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("tier-new"), std::string::npos) << r.err;
}

TEST_F(CliTest, SmokeArtifactFlagLeavesThePositionalTier) {
  const auto config = write("orchestrate.yaml", k_config);
  const auto a = write("a.fatbin", fatbin({{2, 80, 0x11}}));
  const auto r = run_cli({"smoke", "--artifact", a, "tier-nwe", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown tier 'tier-nwe'"), std::string::npos) << r.err;
}

// Issue 13: a tier whose driver no longer runs one of its GPUs is the same
// error (exit 2, file:line) wherever the configuration is read: plan,
// inspect --tier and smoke alike.
TEST_F(CliTest, ADriverPastAGenerationsLastBranchIsAnErrorInEveryCommand) {
  const auto config = write("orchestrate.yaml",
                            "tiers:\n  old:\n    gpus: [\"Tesla P100\"]\n    driver: \"590.44.01\"\nrecipes:\n"
                            "  - name: k\n    framework: cmake\n    source: {path: src}\n    tiers: [old]\n");
  const auto a = write("a.fatbin", fatbin({{2, 60, 0x11}}));
  const std::string message =
      config +
      ":3:12: tier old: driver 590.44.01 no longer runs Tesla P100 (6.0); the last driver branch that does is "
      "R580";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"plan", "-f", config},
                                               {"inspect", a, "--tier", "old", "-f", config},
                                               {"smoke", "--artifact", a, "old", "-f", config}}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_EQ(r.out, "") << args[0];
  }
}

// watch runs one cycle (--once) or a service (--interval D), never both or
// neither; a bad interval and --json without --once are usage errors; a
// configuration without `watch:` and nothing to follow in its place is bad
// input, naming it.
TEST_F(CliTest, WatchNeedsOnceOrAnIntervalAndAWatchSection) {
  const auto config = write("orchestrate.yaml", k_config);
  auto r = run_cli({"watch", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "orchestrate: error: orchestrate watch needs exactly one of --once (one cycle) and --interval D (a "
            "service)\n");
  r = run_cli({"watch", "--once", "--interval", "6h", "-f", config});
  EXPECT_EQ(r.code, 2);
  r = run_cli({"watch", "--interval", "6x", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "orchestrate: error: --interval '6x': expected a positive duration like 30s, 15m, 6h or 1d (a year at "
            "most)\n");
  r = run_cli({"watch", "--interval", "6h", "--json", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "orchestrate: error: --json goes with --once; the service prints status lines\n");
  // With no watch:, nothing recorded here and the offline preference, the
  // service refuses at once, as --once does, and says what to add.
  const ScopedEnv cache("ORCHESTRATE_CACHE_DIR", (m_dir / "cache").string());
  const ScopedEnv preference("ORCHESTRATE_IMAGE_PREFERENCE", "offline");
  r = run_cli({"watch", "--interval", "6h", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(": no 'watch:', and nothing here says what this site's build images are made from: no "
                       "offline image is recorded (`orchestrate images build NAME` makes one, NAME one of "
                       "11.8-bookworm, 12.4-trixie, host-bookworm;"),
            std::string::npos)
      << r.err;
  r = run_cli({"watch", "--once", "--dry-run", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.err.starts_with("orchestrate: error: " + config + ": no 'watch:', and nothing here says")) << r.err;
  EXPECT_NE(r.err.find("Or name what to watch under 'watch:' (recipes/schema.md, watch), e.g. `watch: {images: "
                       "[{url: \"https://registry-1.docker.io/nvidia/cuda\", os: ubuntu22.04}]}`\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, DoctorPathFlagTakesOneValuePerOccurrence) {
  const auto a = write("a.so", fatbin({{2, 80, 0x11}}));
  const auto b = write("b.so", fatbin({{2, 90, 0x11}}));
  const auto r = run_cli({"doctor", "--no-python", "--path", a, "--path", b, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["libraries"].size(), 2u);
  // A second value without its flag is an extra argument, not a second path.
  const auto extra = run_cli({"doctor", "--no-python", "--path", a, b});
  EXPECT_EQ(extra.code, 2);
  EXPECT_NE(extra.err.find(b), std::string::npos) << extra.err;
}

// Like git: a command of subcommands run bare prints its own help (on
// stderr, with the error) and exits 2.
TEST_F(CliTest, CommandsOfSubcommandsRunBarePrintTheirOwnHelp) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands{
      {"key", {"generate", "export", "trust"}}, {"cache", {"ls", "verify", "gc"}}, {"images", {"list", "build", "push"}}};
  for (const auto& [command, subs] : commands) {
    const auto r = run_cli({command});
    EXPECT_EQ(r.code, 2) << command;
    EXPECT_EQ(r.out, "") << command;
    EXPECT_NE(r.err.find("Usage: orchestrate " + command), std::string::npos) << r.err;
    for (const auto& s : subs) EXPECT_NE(r.err.find("\n  " + s + " "), std::string::npos) << command << " " << s;
    EXPECT_TRUE(r.err.ends_with("orchestrate: error: orchestrate " + command + " needs a subcommand: " +
                                util::join(subs, ", ") + " (see 'orchestrate " + command + " --help')\n"))
        << r.err;
    EXPECT_EQ(run_cli({command, "--help"}).code, 0);
  }
}

}  // namespace
}  // namespace orc::cli
