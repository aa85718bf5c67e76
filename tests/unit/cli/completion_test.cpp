// Completion scripts and the man page, generated from the command table:
// sourced in a real bash, rendered by a real groff (where installed).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/cli/cli.hpp"
#include "tests/unit/cli/cli_fixture.hpp"
#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

using testing::CliTest;
using testing::run_cli;

struct Shell {
  int code = -1;
  std::string out;  // stdout and stderr
};

Shell shell(const std::string& command) {
  Shell r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, p)) > 0;) r.out.append(buffer, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const std::vector<std::string> k_every_command{"plan",  "gpus",   "toolkits",   "inspect", "build", "images",
                                               "key",   "cache",  "push",       "pull",    "fetch", "watch",
                                               "smoke", "doctor", "completion", "man"};

class Completion : public CliTest {
 protected:
  // What bash completes for `words` (the last one being completed).
  std::string complete(const std::string& script, const std::string& words) {
    const Shell r = shell("bash -c 'source " + script + " && COMP_WORDS=(" + words +
                          ") && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && _orchestrate && "
                          "printf \"%s\\n\" \"${COMPREPLY[@]}\"'");
    EXPECT_EQ(r.code, 0) << r.out;
    return r.out;
  }
};

TEST_F(Completion, BashCompletesCommandsSubcommandsAndFlags) {
  const auto r = run_cli({"completion", "bash"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string script = write("orchestrate.bash", r.out);
  const Shell registered = shell("bash -c 'source " + script + " && complete -p orchestrate'");
  EXPECT_EQ(registered.code, 0) << registered.out;
  EXPECT_EQ(registered.out, "complete -o filenames -F _orchestrate orchestrate\n");

  EXPECT_EQ(complete(script, "orchestrate pl"), "plan\n");
  EXPECT_EQ(complete(script, "orchestrate c"), "cache\ncompletion\n");
  EXPECT_EQ(complete(script, "orchestrate inspect --ti"), "--tier\n");
  EXPECT_EQ(complete(script, "orchestrate cache \"\""), "ls\nverify\ngc\n-h\n--help\n");
  EXPECT_EQ(complete(script, "orchestrate cache ls --re"), "--recipe\n");
  EXPECT_EQ(complete(script, "orchestrate fetch --require"), "--require-smoke\n");
  // Every command of the table, and nothing else, at the first word.
  std::string all = complete(script, "orchestrate \"\"");
  for (const auto& c : k_every_command) EXPECT_NE(all.find(c + "\n"), std::string::npos) << c;
}

TEST_F(Completion, ZshScriptDescribesEveryCommand) {
  const auto r = run_cli({"completion", "zsh"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("#compdef orchestrate\n"));
  for (const auto& c : k_every_command) EXPECT_NE(r.out.find("'" + c + ":"), std::string::npos) << c;
  EXPECT_NE(r.out.find("'--require-smoke:"), std::string::npos);
  EXPECT_NE(r.out.find("compdef _orchestrate orchestrate"), std::string::npos);
  if (std::filesystem::exists("/usr/bin/zsh") || std::filesystem::exists("/bin/zsh")) {
    const std::string script = write("_orchestrate", r.out);
    const Shell parsed = shell("zsh -n " + script);
    EXPECT_EQ(parsed.code, 0) << parsed.out;
  }
  EXPECT_EQ(run_cli({"completion", "fish"}).code, 2);
}

TEST_F(Completion, ManPageRendersWithoutWarningsAndHasEveryCommand) {
  const auto r = run_cli({"man"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with(".TH ORCHESTRATE 1 "));
  for (const auto& section : {".SH NAME\n", ".SH SYNOPSIS\n", ".SH COMMANDS\n", ".SH EXIT STATUS\n"})
    EXPECT_NE(r.out.find(section), std::string::npos) << section;
  for (const auto& c : k_every_command) EXPECT_NE(r.out.find(".SS \"orchestrate " + c + "\""), std::string::npos) << c;
  EXPECT_NE(r.out.find(".SS \"orchestrate cache gc\""), std::string::npos);
  // No line of text starts with a control character by accident.
  EXPECT_EQ(r.out.find("\n'"), std::string::npos);
  if (!std::filesystem::exists("/usr/bin/groff")) GTEST_SKIP() << "no groff here: checked the structure only";
  const std::string page = write("orchestrate.1", r.out);
  const Shell rendered = shell("groff -man -Tutf8 -ww -z " + page);
  EXPECT_EQ(rendered.code, 0);
  EXPECT_EQ(rendered.out, "");  // no warning at all
  const Shell text = shell("groff -man -Tutf8 -P-cbou " + page);
  EXPECT_NE(text.out.find("orchestrate fetch"), std::string::npos);
}

}  // namespace
}  // namespace orc::cli
