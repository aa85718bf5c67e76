// Cross-checks two emitters of orchestrator/flags against CMake itself: for
// an ArchSet, the nvcc targets CMake derives from our CMAKE_CUDA_ARCHITECTURES
// value must be exactly the targets of our own nvcc -gencode list. CMake
// (the cmake that builds this project) configures tests/integration/
// cmake-project with the real nvcc 13.0; the flags are read back from
// compile_commands.json.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/flags/emit.hpp"
#include "orchestrator/util/version.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using arch::ArchSet;
using arch::ComputeCapability;

// (virtual arch, code) as nvcc reads a -gencode: ("compute_90", "sm_90").
using Target = std::pair<std::string, std::string>;

// Splits a compile_commands.json "command" the way sh would: blanks separate
// words, quotes group, a backslash escapes the next character.
std::vector<std::string> shell_words(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < command.size()) {
        word += command[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

// Every (arch, code) pair of the -gencode / --generate-code options in argv,
// in all the spellings nvcc takes: "-gencode=arch=compute_80,code=sm_80",
// "-gencode arch=...", "--generate-code=arch=compute_90,code=[compute_90,sm_90]"
// and code="sm_90,compute_90". Options nvcc would read as the value of
// another option are not special-cased: CMake and our emitter write none.
std::set<Target> gencode_targets(const std::vector<std::string>& argv) {
  std::set<Target> out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::string value;
    for (std::string_view option : {"-gencode", "--generate-code"}) {
      if (argv[i] == option && i + 1 < argv.size()) {
        value = argv[++i];
        break;
      }
      if (argv[i].starts_with(std::string(option) + "=")) {
        value = argv[i].substr(option.size() + 1);
        break;
      }
    }
    std::smatch m;
    if (value.empty() || !std::regex_match(value, m, std::regex(R"(arch=([^,]+),code=(.+))"))) continue;
    std::string codes = m[2];
    std::erase_if(codes, [](char c) { return c == '[' || c == ']' || c == '"'; });
    std::size_t start = 0;
    while (start <= codes.size()) {
      const std::size_t end = std::min(codes.find(',', start), codes.size());
      if (end > start) out.emplace(m[1], codes.substr(start, end - start));
      start = end + 1;
    }
  }
  return out;
}

std::string describe(const std::set<Target>& targets) {
  std::string out;
  for (const auto& [arch, code] : targets) out += (out.empty() ? "" : " ") + arch + ":" + code;
  return out.empty() ? "(none)" : out;
}

ArchSet arch_set(std::initializer_list<std::string_view> sass, std::initializer_list<std::string_view> ptx) {
  ArchSet set;
  for (auto text : sass) set.sass.insert(ComputeCapability::parse(text).value());
  for (auto text : ptx) set.ptx.insert(ComputeCapability::parse(text).value());
  return set;
}

bool has_family(const ArchSet& set) {
  for (const auto& cc : set.all())
    if (cc.variant() == arch::Variant::family) return true;
  return false;
}

util::Version cmake_version() {
  const ProcessResult r = run_process({ORC_CMAKE_COMMAND, "--version"});
  std::smatch m;
  if (r.exit_code == 0 && std::regex_search(r.output, m, std::regex(R"(cmake version (\d+\.\d+\.\d+))")))
    return util::Version::parse(m[1].str()).value_or(util::Version{});
  return {};
}

// CMAKE_CUDA_ARCHITECTURES takes 'f' from 3.31.8 and 4.0.2 on (cuda-compat.md 5.5).
bool cmake_knows_family(const util::Version& v) {
  const util::Version v4_0(4, 0);
  if (v >= util::Version({4, 0, 0}) && v.truncated(2) == v4_0) return v >= util::Version({4, 0, 2});
  return v >= util::Version({3, 31, 8});
}

TEST(GencodeTargets, ReadsCMakeAndEmitterSpellings) {
  EXPECT_EQ(gencode_targets(shell_words(
                "nvcc -forward-unknown-to-host-compiler --generate-code=arch=compute_80,code=[sm_80] "
                "--generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu -c k.cu -o k.o")),
            (std::set<Target>{{"compute_80", "sm_80"}, {"compute_90", "compute_90"}, {"compute_90", "sm_90"}}));
  EXPECT_EQ(gencode_targets({"-gencode=arch=compute_90a,code=sm_90a", "-gencode", "arch=compute_75,code=compute_75",
                             "-gencode", "arch=compute_86,code=\"sm_86,compute_86\""}),
            (std::set<Target>{{"compute_90a", "sm_90a"},
                              {"compute_75", "compute_75"},
                              {"compute_86", "sm_86"},
                              {"compute_86", "compute_86"}}));
  EXPECT_EQ(shell_words(R"(a 'b c' "d\"e" f\ g)"), (std::vector<std::string>{"a", "b c", "d\"e", "f g"}));
  EXPECT_TRUE(gencode_targets({"-arch=sm_80", "-c", "k.cu"}).empty());
}

struct Case {
  std::string name;
  ArchSet set;
};

// Test names and messages show the case's name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class CMakeArchitectures : public testing::TestWithParam<Case> {};

TEST_P(CMakeArchitectures, CMakeGeneratesTheTargetsOfOurGencodeList) {
  const ArchSet& set = GetParam().set;
  const std::string nvcc = env_or("ORC_CMAKE_NVCC", "/usr/local/cuda/bin/nvcc");
  if (!fs::exists(nvcc)) GTEST_SKIP() << "nvcc not found at " << nvcc << " (set ORC_CMAKE_NVCC)";
  const util::Version version = cmake_version();
  ASSERT_FALSE(version.empty()) << ORC_CMAKE_COMMAND << " --version failed";

  const std::string value = flags::cmake_cuda_architectures(set);
  TempDir dir("orc-cmake");
  const std::vector<std::string> configure = {ORC_CMAKE_COMMAND,
                                              "-S",
                                              ORC_SOURCE_DIR "/tests/integration/cmake-project",
                                              "-B",
                                              (dir.path() / "build").string(),
                                              "-G",
                                              "Ninja",
                                              "-DCMAKE_CUDA_COMPILER=" + nvcc,
                                              "-DCMAKE_CUDA_ARCHITECTURES=" + value,
                                              "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"};
  const ProcessResult r = run_process(configure);

  if (has_family(set) && !cmake_knows_family(version)) {
    // The cmake emitter promises a warning for exactly this case; CMake must
    // then refuse the value, or the warning is wrong.
    const auto emitted = flags::find_emitter("cmake")->emit(set, flags::EmitContext{});
    EXPECT_FALSE(emitted.warnings.empty()) << "the cmake emitter does not warn about 'f' in " << value;
    EXPECT_NE(r.exit_code, 0) << "CMake " << version.str() << " accepted 'f' targets in " << value << "\n"
                              << r.output;
    EXPECT_NE(r.output.find("CMAKE_CUDA_ARCHITECTURES"), std::string::npos) << r.output;
    GTEST_SKIP() << "CMake " << version.str() << " refuses 'f' targets (" << value
                 << "), as the cmake emitter warns; the flag comparison needs CMake >= 3.31.8 / 4.0.2";
  }
  ASSERT_EQ(r.exit_code, 0) << quoted(configure) << "\n" << r.output;

  std::ifstream in(dir.path() / "build" / "compile_commands.json");
  ASSERT_TRUE(in) << "no compile_commands.json after " << quoted(configure);
  const auto commands = nlohmann::json::parse(in);
  std::vector<std::string> argv;
  for (const auto& entry : commands) {
    if (!entry.value("file", std::string()).ends_with("kernel.cu")) continue;
    if (entry.contains("arguments")) {
      argv = entry["arguments"].get<std::vector<std::string>>();
    } else {
      argv = shell_words(entry.value("command", std::string()));
    }
  }
  ASSERT_FALSE(argv.empty()) << "no command for kernel.cu in compile_commands.json:\n" << commands.dump(2);

  for (const auto& arg : argv) {
    EXPECT_FALSE(arg.starts_with("-arch") || arg.starts_with("--gpu-architecture"))
        << "CMake passed " << arg << " for CMAKE_CUDA_ARCHITECTURES=" << value;
  }
  const std::set<Target> from_cmake = gencode_targets(argv);
  const std::set<Target> ours = gencode_targets(flags::nvcc_gencode(set));
  ASSERT_FALSE(ours.empty()) << "nvcc_gencode produced no targets";
  EXPECT_EQ(from_cmake, ours) << "CMAKE_CUDA_ARCHITECTURES=" << value << "\n  CMake:  " << describe(from_cmake)
                              << "\n  nvcc_gencode: " << describe(ours) << "\n  command: " << quoted(argv);
  std::cout << "[ cmake " << version.str() << " ] " << value << " -> " << describe(from_cmake) << "\n";
}

INSTANTIATE_TEST_SUITE_P(
    Sets, CMakeArchitectures,
    testing::Values(Case{"ampere_to_hopper_ptx90", arch_set({"80", "86", "89", "90"}, {"90"})},
                    Case{"turing_sass_and_ptx", arch_set({"75"}, {"75"})},
                    Case{"hopper_generic_and_arch_specific", arch_set({"90", "90a"}, {})},
                    Case{"blackwell_ptx120", arch_set({"100", "120"}, {"120"})},
                    Case{"ptx_only_80", arch_set({}, {"80"})},
                    Case{"mixed_virtual_and_a", arch_set({"75", "100a"}, {"86"})},
                    Case{"family_100f", arch_set({"100f", "120"}, {"120"})}),
    [](const testing::TestParamInfo<Case>& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace orc::integration
