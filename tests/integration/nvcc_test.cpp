// The toolkit table (orchestrator/compat/toolkits.hpp) against real nvcc
// binaries: every arch a row claims must compile, every arch it lacks must be
// refused, deprecation warnings must appear exactly for the deprecated archs,
// and a bare compile must embed the row's default arch. The table is the
// expectation, so a wrong row fails here.
//
// Where each toolkit is looked for, first hit wins:
//   $ORC_TOOLCHAINS/cuda-X.Y/bin/nvcc   (default <repo>/toolchains, filled by
//                                        scripts/install-cuda-toolkits.sh)
//   /usr/local/cuda-X.Y/bin/nvcc
//   /usr/local/cuda/bin/nvcc            (when it reports release X.Y)
// A toolkit found nowhere is skipped with the reason printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/compat/toolkits.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using arch::ComputeCapability;
using arch::Variant;
using compat::Toolkit;

constexpr std::string_view k_kernel = "__global__ void k(int* p){ *p = 42; }\n";
// The toolkits this suite always lists (so a missing one shows as skipped);
// any other cuda-X.Y under the toolchains directory is tested too.
const std::vector<std::string> k_known_toolkits = {"11.8", "12.4", "13.0"};
// Targets no nvcc knows, refused by every row that does not list them.
const std::vector<ComputeCapability> k_bogus = {
    {9, 9}, {9, 0, Variant::family}, {8, 9, Variant::family}, {8, 0, Variant::arch_specific}};

fs::path toolchains_dir() { return env_or("ORC_TOOLCHAINS", ORC_SOURCE_DIR "/toolchains"); }

unsigned jobs() {
  const int n = std::atoi(env_or("ORC_NVCC_JOBS", "2").c_str());
  return n > 0 ? static_cast<unsigned>(n) : 2u;
}

std::vector<std::string> toolkits_under_test() {
  std::set<std::string> versions(k_known_toolkits.begin(), k_known_toolkits.end());
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(toolchains_dir(), error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("cuda-") && fs::exists(entry.path() / "bin" / "nvcc")) versions.insert(name.substr(5));
  }
  return {versions.begin(), versions.end()};
}

// "12.4" from nvcc --version's "Cuda compilation tools, release 12.4, V12.4.131".
std::string reported_release(const fs::path& nvcc) {
  const ProcessResult r = run_process({nvcc.string(), "--version"});
  std::smatch m;
  if (r.exit_code == 0 && std::regex_search(r.output, m, std::regex(R"(release (\d+\.\d+),)"))) return m[1];
  return "";
}

std::string gencode(ComputeCapability cc) { return "arch=" + cc.compute() + ",code=" + cc.sm(); }

// nvcc's deprecation warnings end with this hint in every release seen
// (8.0's Fermi list, 11.x's Kepler list, 12.8's "prior to '<compute/sm/lto>_75'").
bool has_deprecation_warning(const std::string& output) {
  return output.find("-Wno-deprecated-gpu-targets") != std::string::npos;
}

// Whether a deprecation warning covers `cc`: 11.x quotes each name
// ("The 'compute_35', ..., 'sm_37' architectures are deprecated"), 12.8+
// names a floor ("architectures prior to '<compute/sm/lto>_75'").
bool warning_covers(const std::string& output, ComputeCapability cc) {
  std::smatch m;
  if (std::regex_search(output, m, std::regex(R"(prior to '<compute/sm/lto>_(\d+)')")))
    return cc.number() < std::stoi(m[1]);
  return output.find("'" + cc.sm() + "'") != std::string::npos;
}

// The two forms nvcc uses for a target it does not know (cuda-compat.md 2.1):
// "Unsupported gpu architecture 'compute_XY'" (-gencode, and -arch on 13.x)
// and "Value 'sm_XY' is not defined for option 'gpu-architecture'" (-arch,
// -code on older releases).
bool is_refusal(const std::string& output, ComputeCapability cc) {
  auto has = [&](const std::string& text) { return output.find(text) != std::string::npos; };
  return has("nvcc fatal   : Unsupported gpu architecture '" + cc.compute() + "'") ||
         has("nvcc fatal   : Value '" + cc.compute() + "' is not defined for option") ||
         has("nvcc fatal   : Value '" + cc.sm() + "' is not defined for option");
}

const Toolkit* released_neighbour(const Toolkit& row, int step) {
  const auto table = compat::toolkit_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (&table[i] != &row) continue;
    for (auto j = static_cast<std::ptrdiff_t>(i) + step; j >= 0 && j < std::ssize(table); j += step)
      if (table[static_cast<std::size_t>(j)].released) return &table[static_cast<std::size_t>(j)];
  }
  return nullptr;
}

std::string first_lines(const std::string& text, int n = 6) {
  std::string out;
  std::size_t pos = 0;
  for (int i = 0; i < n && pos < text.size(); ++i) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    out += "    " + text.substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  return out;
}

std::string describe(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out.empty() ? "(none)" : out;
}

class NvccToolkit : public testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    // A developer's shell may carry these (our nvcc emitter writes
    // NVCC_APPEND_FLAGS); nvcc would add them to every command below.
    ::unsetenv("NVCC_PREPEND_FLAGS");
    ::unsetenv("NVCC_APPEND_FLAGS");
  }

  void SetUp() override {
    const auto version = util::Version::parse(GetParam());
    ASSERT_TRUE(version.has_value()) << GetParam();
    m_row = compat::find_toolkit(*version);
    ASSERT_NE(m_row, nullptr) << "the toolkit table has no row for " << GetParam();

    const fs::path ours = toolchains_dir() / ("cuda-" + GetParam()) / "bin" / "nvcc";
    const std::vector<fs::path> candidates = {ours, "/usr/local/cuda-" + GetParam() + "/bin/nvcc",
                                              "/usr/local/cuda/bin/nvcc"};
    std::string tried;
    for (const fs::path& candidate : candidates) {
      if (!fs::exists(candidate)) {
        tried += (tried.empty() ? "" : ", ") + candidate.string();
        continue;
      }
      const std::string release = reported_release(candidate);
      if (release == GetParam()) {
        m_nvcc = candidate;
        break;
      }
      // A toolchain directory named for this version must hold that version.
      ASSERT_NE(candidate, ours) << candidate << " reports release '" << release << "', not " << GetParam();
      tried += (tried.empty() ? "" : ", ") + candidate.string() + " (release " + release + ")";
    }
    if (m_nvcc.empty()) {
      GTEST_SKIP() << "nvcc " << GetParam() << " not found at " << tried
                   << "; run scripts/install-cuda-toolkits.sh (or set ORC_TOOLCHAINS)";
    }
    std::ofstream(m_dir.path() / "k.cu") << k_kernel;
  }

  // `nvcc -cubin -gencode arch=compute_XY,code=sm_XY k.cu` per CC, 2 at a
  // time: -cubin stops after ptxas, which is where an arch is accepted or not.
  std::vector<ProcessResult> compile_each(const std::vector<ComputeCapability>& ccs) {
    std::vector<std::vector<std::string>> commands;
    for (const auto& cc : ccs) commands.push_back(command_for(cc));
    const auto started = std::chrono::steady_clock::now();
    auto results = run_parallel(commands, jobs());
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    std::cout << "[ nvcc " << GetParam() << " ] " << ccs.size() << " compiles, " << jobs() << " at a time: "
              << took.count() << " s\n";
    return results;
  }

  std::vector<std::string> command_for(ComputeCapability cc) const {
    return {m_nvcc.string(), "-cubin", "-gencode", gencode(cc), (m_dir.path() / "k.cu").string(),
            "-o", (m_dir.path() / ("k_" + cc.digits() + ".cubin")).string()};
  }

  bool cubin_written(ComputeCapability cc) const {
    std::ifstream in(m_dir.path() / ("k_" + cc.digits() + ".cubin"), std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    return in && std::string_view(magic, 4) == "\x7f" "ELF";
  }

  const Toolkit* m_row = nullptr;
  fs::path m_nvcc;
  TempDir m_dir{"orc-nvcc"};
};

TEST_P(NvccToolkit, AcceptsEveryTabledArchAndWarnsOnlyForDeprecatedOnes) {
  const auto& archs = m_row->archs;
  const auto results = compile_each(archs);
  int accepted = 0, warned = 0;
  for (std::size_t i = 0; i < archs.size(); ++i) {
    const ComputeCapability cc = archs[i];
    const ProcessResult& r = results[i];
    const std::string what = "nvcc " + GetParam() + ", " + cc.sm() + ": " + quoted(command_for(cc));
    if (r.exit_code != 0) {
      ADD_FAILURE() << what << "\n  the table lists " << cc.sm() << " but nvcc refused it (exit " << r.exit_code
                    << "):\n" << first_lines(r.output);
      continue;
    }
    ++accepted;
    EXPECT_TRUE(cubin_written(cc)) << what << "\n  exit 0 but no ELF cubin written";
    const bool warns = has_deprecation_warning(r.output);
    warned += warns;
    if (m_row->is_deprecated(cc)) {
      EXPECT_TRUE(warns) << what << "\n  the table marks " << cc.sm()
                         << " deprecated but nvcc printed no deprecation warning:\n" << first_lines(r.output);
      if (warns) {
        EXPECT_TRUE(warning_covers(r.output, cc))
            << what << "\n  the deprecation warning does not cover " << cc.sm() << ":\n" << first_lines(r.output);
      }
    } else {
      EXPECT_FALSE(warns) << what << "\n  the table does not mark " << cc.sm()
                          << " deprecated but nvcc warned:\n" << first_lines(r.output);
    }
  }
  std::cout << "[ nvcc " << GetParam() << " ] " << accepted << "/" << archs.size()
            << " tabled archs accepted; " << warned << " warned as deprecated (table: " << m_row->deprecated.size()
            << ")\n";
}

TEST_P(NvccToolkit, RefusesArchsTheTableSaysItLacks) {
  // Each CC the row does not list, with why we expect a refusal.
  std::map<ComputeCapability, std::string> gone;
  auto add = [&](ComputeCapability cc, const std::string& why) {
    if (!m_row->accepts(cc)) gone.try_emplace(cc, why);
  };
  for (const auto& cc : m_row->removed) add(cc, "the row's 'removed'");
  for (int step : {-1, 1})
    if (const Toolkit* t = released_neighbour(*m_row, step))
      for (const auto& cc : t->archs) add(cc, "listed by " + t->version.str() + ", not by " + GetParam());
  for (const auto& cc : k_bogus) add(cc, "no such target");
  for (const Toolkit& t : compat::toolkit_table())
    for (const auto& cc : t.archs) add(cc, "listed by " + t.version.str() + ", not by " + GetParam());

  std::vector<ComputeCapability> ccs;
  for (const auto& [cc, why] : gone) ccs.push_back(cc);
  const auto results = compile_each(ccs);
  int refused = 0;
  for (std::size_t i = 0; i < ccs.size(); ++i) {
    const ComputeCapability cc = ccs[i];
    const ProcessResult& r = results[i];
    const std::string what = "nvcc " + GetParam() + ", " + cc.sm() + " (" + gone[cc] + "): " + quoted(command_for(cc));
    if (r.exit_code == 0) {
      ADD_FAILURE() << what << "\n  the table says nvcc " << GetParam() << " lacks " << cc.sm()
                    << " but nvcc compiled it:\n" << first_lines(r.output);
      continue;
    }
    ++refused;
    EXPECT_TRUE(is_refusal(r.output, cc))
        << what << "\n  nvcc failed (exit " << r.exit_code << ") but not with an unsupported-arch error:\n"
        << first_lines(r.output);
  }
  std::cout << "[ nvcc " << GetParam() << " ] " << refused << "/" << ccs.size() << " untabled archs refused\n";
}

TEST_P(NvccToolkit, BareCompileEmbedsTheDefaultArch) {
  const std::vector<std::string> command = {m_nvcc.string(), "--dryrun", "-c", (m_dir.path() / "k.cu").string(),
                                            "-o", (m_dir.path() / "k.o").string()};
  const ProcessResult r = run_process(command);
  ASSERT_EQ(r.exit_code, 0) << quoted(command) << "\n" << r.output;

  // cicc "-arch compute_XY" (PTX), ptxas "-arch=sm_XY" (SASS) and the two
  // images fatbinary embeds ("--image3=kind=elf,sm=XY", "kind=ptx,sm=XY").
  auto collect = [&](const char* pattern) {
    std::set<std::string> found;
    const std::regex re(pattern);
    for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), re); it != std::sregex_iterator(); ++it)
      found.insert((*it)[1]);
    return found;
  };
  const ComputeCapability def = m_row->default_arch;
  const std::set<std::string> want_ptx = {def.compute()}, want_sass = {def.sm()}, want_digits = {def.digits()};
  const std::string what = quoted(command) + " (the table's default_arch is " + def.sm() + ")";
  EXPECT_EQ(collect(R"(cicc.* -arch (compute_\w+))"), want_ptx) << what;
  EXPECT_EQ(collect(R"(ptxas.* -arch=(sm_\w+))"), want_sass) << what;
  EXPECT_EQ(collect(R"(--image3=kind=elf,sm=(\w+))"), want_digits) << what << ": SASS image";
  EXPECT_EQ(collect(R"(--image3=kind=ptx,sm=(\w+))"), want_digits) << what << ": PTX image";
  EXPECT_EQ(has_deprecation_warning(r.output), m_row->is_deprecated(def))
      << what << ": a bare compile warns exactly when the default arch is deprecated\n" << first_lines(r.output);
  std::cout << "[ nvcc " << GetParam() << " ] bare compile: ptxas " << describe(collect(R"(ptxas.* -arch=(sm_\w+))"))
            << ", cicc " << describe(collect(R"(cicc.* -arch (compute_\w+))")) << " (table: " << def.sm() << ")\n";
}

INSTANTIATE_TEST_SUITE_P(Table, NvccToolkit, testing::ValuesIn(toolkits_under_test()),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           std::string name = "cuda_" + param_info.param;
                           std::ranges::replace(name, '.', '_');
                           return name;
                         });

}  // namespace
}  // namespace orc::integration
