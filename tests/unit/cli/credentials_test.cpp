// Issue 11: a password written into a remote URL never reaches stdout,
// stderr or JSON, however the URL is written (well or badly, in the
// configuration, an included file, ORCHESTRATE_REMOTE or an argument).
// Each case runs the real configuration reader through the command line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::run_cli;

constexpr std::string_view k_password = "Pw-9f3kQz";

constexpr const char* k_head = R"(tiers:
  t:
    gpus: ["H100"]
recipes:
  - {name: a, framework: cmake, source: {path: s}, tiers: [t]}
)";

class Credentials : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("orc-credentials-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
             std::to_string(::getpid()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    ::setenv("ORCHESTRATE_CACHE_DIR", (m_dir / "store").c_str(), 1);
    ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir / "keys").c_str(), 1);
    ::unsetenv("ORCHESTRATE_REMOTE");
  }
  void TearDown() override {
    ::unsetenv("ORCHESTRATE_CACHE_DIR");
    ::unsetenv("ORCHESTRATE_KEYS_DIR");
    ::unsetenv("ORCHESTRATE_REMOTE");
    fs::remove_all(m_dir);
  }

  std::string write(const std::string& name, const std::string& text) const {
    const auto path = m_dir / name;
    std::ofstream(path) << text;
    return path.string();
  }

  fs::path m_dir;
};

// Replaces every "PW" of `text` with the password.
std::string with_password(std::string text) {
  for (auto at = text.find("PW"); at != std::string::npos; at = text.find("PW", at + k_password.size()))
    text.replace(at, 2, k_password);
  return text;
}

void expect_no_password(const CliResult& r, const std::string& what) {
  EXPECT_EQ(r.out.find(k_password), std::string::npos) << what << ": stdout\n" << r.out;
  EXPECT_EQ(r.err.find(k_password), std::string::npos) << what << ": stderr\n" << r.err;
}

struct Form {
  const char* name;
  const char* config;  // appended to k_head; "PW" stands for the password
};

// The eight forms issue 11 tried, and a few more; every one is a
// configuration error (exit 2) whose excerpt shows the line of the URL.
constexpr Form k_forms[] = {
    {"plain", "remote: \"ftp://u:PW@127.0.0.1:1/r\"\n"},
    {"duplicate key", "remote: \"http://u:PW@127.0.0.1:1/r\"\nremote: \"http://u:PW@127.0.0.1:1/r\"\n"},
    {"list", "remote: [http://u:PW@127.0.0.1:1/r]\n"},
    {"unterminated quote", "remote: \"http://u:PW@127.0.0.1:1/r\n"},
    {"block scalar", "remote: |\n  ftp://u:PW@127.0.0.1:1/r\n"},
    {"folded block", "remote: >-\n  http://u:PW@127.0.0.1:1\n"},
    {"flow map", "remote: {url: \"http://u:PW@127.0.0.1:1/r\"}\n"},
    {"anchor and alias", "x-remote: &r \"ftp://u:PW@127.0.0.1:1/r\"\nremote: *r\n"},
    {"misspelt key", "remot: http://u:PW@127.0.0.1:1/r\n"},
    {"two URLs on a line", "remote: [\"http://a/b\", \"https://u:PW@h/r\", 'http://v:PW@g/s']\n"},
    {"password with '/' and '@'", "remote: \"http://u:PW/x@y@127.0.0.1:1/r#f\"\n"},
    {"tab and garbage", "remote:\t\"http://u:PW@127.0.0.1:1/r\" ]]\n"},
};

TEST_F(Credentials, MalformedRemotesNeverPrintThePassword) {
  for (const Form& form : k_forms) {
    const std::string file = write("orchestrate.yaml", std::string(k_head) + with_password(form.config));
    for (const bool json : {false, true}) {
      std::vector<std::string> args{"plan", "-f", file};
      if (json) args.push_back("--json");
      const CliResult r = run_cli(args);
      const std::string what = std::string(form.name) + (json ? " --json" : "");
      EXPECT_EQ(r.code, 2) << what << "\n" << r.err;
      EXPECT_EQ(r.out, "") << what;
      EXPECT_NE(r.err.find(file + ":"), std::string::npos) << what << ": the error names the file\n" << r.err;
      expect_no_password(r, what);
    }
  }
}

// Where the excerpt is the line of the URL, it is still shown, with "***"
// where the credentials were, and the caret under the same character.
TEST_F(Credentials, TheExcerptIsShownRedacted) {
  const std::string expected[] = {
      ":6:9: invalid 'remote': expected an http:// or https:// URL\n"
      "    remote: \"ftp://***@127.0.0.1:1/r\"\n"
      "            ^\n",
      ":7:1: duplicate key 'remote'\n"
      "    remote: \"http://***@127.0.0.1:1/r\"\n"
      "    ^\n",
  };
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    const std::string file = write("orchestrate.yaml", std::string(k_head) + with_password(k_forms[i].config));
    EXPECT_EQ(run_cli({"plan", "-f", file}).err, "orchestrate: error: " + file + expected[i]) << k_forms[i].name;
  }
}

TEST_F(Credentials, AnIncludedFileIsRedactedLikeTheMainOne) {
  write("r.recipe.yaml", with_password("name: b\nframework: cmake\nsource: {path: s}\ntiers: [t]\n"
                                       "remote: \"http://u:PW@127.0.0.1:1/r\"\n"
                                       "source: {git: \"https://ci:PW@git.example/x.git\", ref: v1}\n"));
  const std::string file = write("orchestrate.yaml", std::string(k_head) + "include: [r.recipe.yaml]\n");
  const CliResult r = run_cli({"plan", "-f", file, "--json"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown key 'remote'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("    remote: \"http://***@127.0.0.1:1/r\"\n"), std::string::npos) << r.err;
  expect_no_password(r, "included");
}

TEST_F(Credentials, MalformedOrchestrateRemoteIsRefusedWithoutQuotingIt) {
  const std::string file = write("orchestrate.yaml", k_head);
  for (const char* url : {"u:PW@127.0.0.1:1/r", "http:/u:PW@127.0.0.1:1/r", "ftp://u:PW@127.0.0.1:1/r",
                          "http://u:PW@127.0.0.1:1", "http://u:P W@127.0.0.1:1/r", "http://u:PW@127.0.0.1:1/r?x"}) {
    ::setenv("ORCHESTRATE_REMOTE", with_password(url).c_str(), 1);
    for (const std::string command : {"pull", "fetch"}) {
      std::vector<std::string> args{command, "a", "--tier", "t", "-f", file, "--json"};
      if (command == "fetch") args.insert(args.end(), {"-o", (m_dir / "out").string()});
      const CliResult r = run_cli(args);
      EXPECT_EQ(r.code, 2) << url << " " << command << "\n" << r.err;
      EXPECT_NE(r.err.find("invalid ORCHESTRATE_REMOTE: "), std::string::npos) << r.err;
      expect_no_password(r, std::string(url) + " " + command);
    }
  }
}

// A well-formed URL with credentials, to a registry that is not there: the
// failure names the remote without them, in text and in JSON.
TEST_F(Credentials, AnUnreachableRemoteIsNamedWithoutCredentials) {
  const std::string file =
      write("orchestrate.yaml", std::string(k_head) + with_password("remote: \"http://u:PW@127.0.0.1:1/team/r\"\n"));
  for (const bool from_env : {false, true}) {
    if (from_env) ::setenv("ORCHESTRATE_REMOTE", with_password("http://ci:PW@127.0.0.1:1/team/r").c_str(), 1);
    const CliResult r = run_cli({"pull", "a", "--tier", "t", "-f", file, "--json"});
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
    expect_no_password(r, from_env ? "ORCHESTRATE_REMOTE" : "remote:");
  }
}

TEST_F(Credentials, ArgumentsAreRedactedInUsageErrors) {
  const std::string url = with_password("http://u:PW@127.0.0.1:1/r");
  for (const auto& args :
       std::vector<std::vector<std::string>>{{url},                                            // unknown command
                                             {"plan", "-f", url},                              // cannot read the file
                                             {"plan", "--bogus=" + url},                       // CLI11's parse error
                                             {"plan", "-f", write("o.yaml", k_head), url}}) {  // unknown tier
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args.back() << "\n" << r.err;
    EXPECT_NE(r.err.find("http://***@127.0.0.1:1/r"), std::string::npos) << r.err;
    expect_no_password(r, args.back());
  }
}

}  // namespace
}  // namespace orc::cli
