// Issue 11: shell syntax in a build step, which no shell ever sees, gets a
// warning at the argument that holds it, in both the argv and the command
// line form; what a program takes literally (CMake lists, the code of
// sh -c) gets none.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/recipe/test_support.hpp"

namespace orc::recipe {
namespace {

using testing::parse_ok;

constexpr const char* k_advice =
    "', but no shell runs build steps: the program gets it as literal text; split it into separate arguments, or "
    "run a shell explicitly ([sh, -c, \"...\"] or {script: FILE})";

// The warnings of a configuration whose one recipe has `build:` as given
// (YAML text of the list's one item, written on line 6).
std::vector<std::string> step_warnings(const std::string& step) {
  const Config config = parse_ok(std::string(testing::k_tiers) + R"(recipes:
  - name: b
    framework: cmake
    source: {path: .}
    tiers: [tier-new]
    build:
      - )" + step + "\n");
  std::vector<std::string> out;
  for (const auto& w : config.warnings) out.push_back(w.headline());
  return out;
}

std::string warning_at(int col, const std::string& found) {
  return "orchestrate: warning: t.yaml:10:" + std::to_string(col) + ": build step argument holds '" + found + k_advice;
}

TEST(RecipeBuildSteps, ShellSyntaxInOneArgvElementIsWarnedAtThatElement) {
  // Issue 11's cases: a whole command line in one element.
  EXPECT_EQ(step_warnings(R"s([make, "all; make install"])s"), std::vector{warning_at(16, ";")});
  EXPECT_EQ(step_warnings(R"s(["make && make install"])s"), std::vector{warning_at(10, "&&")});
  EXPECT_EQ(step_warnings(R"s([sh, "-x", "a || b"])s"), std::vector{warning_at(20, "||")});
  EXPECT_EQ(step_warnings(R"s([cat, "log | head"])s"), std::vector{warning_at(15, "|")});
  EXPECT_EQ(step_warnings(R"s([echo, "`date`"])s"), std::vector{warning_at(16, "`")});
  EXPECT_EQ(step_warnings(R"s([echo, "$(date)"])s"), std::vector{warning_at(16, "$(")});
  EXPECT_EQ(step_warnings(R"s([make, ">build.log"])s"), std::vector{warning_at(16, ">")});
  EXPECT_EQ(step_warnings(R"s([make, "2>/dev/null"])s"), std::vector{warning_at(16, "2>")});
  EXPECT_EQ(step_warnings(R"s([make, "&&", make, install])s"), std::vector{warning_at(16, "&&")});
  EXPECT_EQ(step_warnings(R"s([make, "all;"])s"), std::vector{warning_at(16, ";")});
  // One warning per step, at its first such argument.
  EXPECT_EQ(step_warnings(R"s([a, "x; y", "p | q"])s"), std::vector{warning_at(13, ";")});
}

TEST(RecipeBuildSteps, ShellSyntaxInACommandLineIsWarnedAtTheLine) {
  EXPECT_EQ(step_warnings("make && make install"), std::vector{warning_at(9, "&&")});
  EXPECT_EQ(step_warnings("\"make; make install\""), std::vector{warning_at(9, ";")});
  EXPECT_EQ(step_warnings("cmake --build build > log"), std::vector{warning_at(9, ">")});
  EXPECT_EQ(step_warnings("echo $(nproc)"), std::vector{warning_at(9, "$(")});
  // The words still become argv, literally.
  const Config config = parse_ok(std::string(testing::k_tiers) + R"(recipes:
  - {name: b, framework: cmake, source: {path: .}, tiers: [tier-new], build: ["make && make install"]}
)");
  EXPECT_EQ(config.recipes.at(0).build.at(0).argv, (std::vector<std::string>{"make", "&&", "make", "install"}));
}

TEST(RecipeBuildSteps, WhatProgramsTakeLiterallyIsNotWarned) {
  for (const char* step : {
           R"s([cmake, "-DCMAKE_CUDA_ARCHITECTURES=80;90", "-DX=a|b"])s",  // CMake lists, alternatives
           R"s([env, "TORCH_CUDA_ARCH_LIST=8.0;9.0+PTX", python, setup.py])s",
           R"s([sh, -c, "make && make install > log"])s",  // an explicit shell: its own syntax
           R"s([bash, "-c", "a; b | c"])s",
           R"s([python, -c, "import a; a.run()"])s",
           R"s([pip, install, "torch>=2.4,<3"])s",
           "cmake -S . -B build \"-DNAME=a b\"",
           "sh -c 'make && make install'",
       })
    EXPECT_EQ(step_warnings(step), std::vector<std::string>{}) << step;
}

}  // namespace
}  // namespace orc::recipe
