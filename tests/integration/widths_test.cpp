// Every table and help text fits the width it is laid out for (issue 29,
// point 6): the binary as a user runs it, with COLUMNS at 80, 100 and 200,
// on help, the tables, a plan of the example configuration, a store's sets
// and a fatbin built by nvcc. A line may pass the width only where one word
// is longer than the line (a path); wrapping never cuts a word: the words
// of each output are the same at every width.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;

const std::string k_nvcc = env_or("NVCC", "/usr/local/cuda/bin/nvcc");
constexpr std::size_t k_widths[] = {80, 100, 200};

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::ranges::count_if(text, [](char c) { return (c & 0xC0) != 0x80; }));
}

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  std::ranges::sort(out);
  return out;
}

class Widths : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_dir = new TempDir("orc-widths-it");
    std::ofstream(root() / "k.cu") << "__global__ void scale_every_element(float* x) { x[threadIdx.x] *= 2; }\n";
    s_nvcc = run_process({k_nvcc, "-fatbin", "-gencode", "arch=compute_80,code=sm_80", "-gencode",
                          "arch=compute_90,code=[sm_90,compute_90]", "-gencode", "arch=compute_120,code=sm_120", "-o",
                          (root() / "k.fatbin").string(), (root() / "k.cu").string()});
    if (s_nvcc.exit_code == 0)
      s_seed = run_process({ORC_SEED, "--built-for=highest:A100=8.0", (root() / "store").string(), "-",
                            "a-recipe-with-a-rather-long-name-indeed", "tier-with-a-long-name",
                            (root() / "k.fatbin").string()});
  }
  static void TearDownTestSuite() {
    delete s_dir;
    s_dir = nullptr;
  }
  static fs::path root() { return s_dir->path(); }

  // stdout of `orchestrate ARGS` laid out for `columns`, with the exit code
  // expected (-1: any; the layout is what is checked).
  static std::string orc(std::size_t columns, const std::vector<std::string>& args, int expected = 0) {
    std::vector<std::string> argv = {"sh",
                                     "-c",
                                     "exec \"$@\" 2>/dev/null",
                                     "sh",
                                     "env",
                                     "-u",
                                     "ORCHESTRATE_CONFIG",
                                     "ORCHESTRATE_CACHE_DIR=" + (root() / "store").string(),
                                     "ORCHESTRATE_KEYS_DIR=" + (root() / "keys").string(),
                                     "COLUMNS=" + std::to_string(columns),
                                     ORC_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = run_process(argv, root());
    if (expected >= 0)
      EXPECT_EQ(result.exit_code, expected) << "orchestrate " << testing::PrintToString(args) << "\n" << result.output;
    return result.output;
  }

  // Each line within `columns` unless it is one word longer than that; the
  // same words at every width.
  static void expect_fits(const std::vector<std::string>& args, int expected = 0) {
    std::map<std::size_t, std::string> outputs;
    for (const std::size_t columns : k_widths) {
      SCOPED_TRACE("COLUMNS=" + std::to_string(columns) + " orchestrate " + testing::PrintToString(args));
      const std::string out = orc(columns, args, expected);
      ASSERT_FALSE(out.empty());
      std::istringstream lines(out);
      for (std::string line; std::getline(lines, line);)
        if (display_width(line) > columns) EXPECT_EQ(words_of(line).size(), 1u) << "too wide:\n" << line;
      outputs[columns] = out;
    }
    EXPECT_EQ(words_of(outputs[80]), words_of(outputs[200])) << "a word was cut or lost at 80 columns:\n"
                                                             << outputs[80] << "\nat 200:\n"
                                                             << outputs[200];
    // Narrower output has more lines, not longer ones.
    EXPECT_GE(std::ranges::count(outputs[80], '\n'), std::ranges::count(outputs[200], '\n'));
  }

  static inline TempDir* s_dir = nullptr;
  static inline ProcessResult s_nvcc;
  static inline ProcessResult s_seed;
};

// The names under "Subcommands:" in a help text.
std::vector<std::string> subcommands(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream lines(help);
  bool in = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == "Subcommands:") {
      in = true;
      continue;
    }
    if (!in) continue;
    if (line.empty()) break;
    if (line.size() > 2 && line.starts_with("  ") && line[2] != ' ')
      out.push_back(words_of(line.substr(0, line.find(' ', 2))).front());
  }
  return out;
}

TEST_F(Widths, TheHelpOfEveryCommandAndSubcommand) {
  expect_fits({"--help"});
  const auto commands = subcommands(orc(200, {"--help"}));
  ASSERT_GE(commands.size(), 20u) << orc(200, {"--help"});
  for (const auto& command : commands) {
    expect_fits({command, "--help"});
    for (const auto& sub : subcommands(orc(200, {command, "--help"}))) expect_fits({command, sub, "--help"});
  }
}

TEST_F(Widths, TheTablesOfGpusAndToolkits) {
  expect_fits({"gpus"});
  expect_fits({"toolkits"});
  expect_fits({"toolkits", "--cudnn"});
}

TEST_F(Widths, ThePlanOfTheExampleConfiguration) {
  // Its exit code depends on what this machine can build with (1 where a
  // tier has nothing); the lines are what is checked.
  expect_fits({"plan", "-f", std::string(ORC_SOURCE_DIR) + "/recipes/orchestrate.yaml", "--explain"}, -1);
}

TEST_F(Widths, TheStoresSetsAndAFatbinsTargets) {
  if (s_nvcc.exit_code != 0) GTEST_SKIP() << "nvcc (" << k_nvcc << ") failed: " << s_nvcc.output;
  ASSERT_EQ(s_seed.exit_code, 0) << s_seed.output;
  expect_fits({"cache", "ls"});
  expect_fits({"inspect", (root() / "k.fatbin").string()});
}

}  // namespace
}  // namespace orc::integration
