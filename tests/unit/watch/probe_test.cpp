// What a toolkit image's nvcc says: --list-gpu-code parsed, compared with
// the tables' row, kept in the probes file, and learned by the tables.
#include "orchestrator/watch/probe.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "orchestrator/compat/toolkits.hpp"

namespace orc::watch {
namespace {

namespace fs = std::filesystem;

util::Version v(std::string_view text) { return *util::Version::parse(text); }

// What nvcc 13.0.88 printed on this machine for `nvcc --list-gpu-code`.
constexpr std::string_view k_nvcc_13_0 =
    "sm_75\nsm_80\nsm_86\nsm_87\nsm_88\nsm_89\nsm_90\nsm_100\nsm_110\nsm_103\nsm_120\nsm_121\n";

TEST(WatchProbe, ParsesTheListAscendingAndRefusesOtherLines) {
  const auto list = parse_gpu_code_list(k_nvcc_13_0);
  ASSERT_TRUE(list) << list.error();
  ASSERT_EQ(list->size(), 12u);
  EXPECT_EQ(list->front().sm(), "sm_75");
  EXPECT_EQ((*list)[8].sm(), "sm_103");  // nvcc prints 110 before 103; sorted here
  EXPECT_EQ(list->back().sm(), "sm_121");
  EXPECT_FALSE(parse_gpu_code_list(""));
  const auto bad = parse_gpu_code_list("sm_75\nnvcc fatal : Unknown option '--list-gpu-code'\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("not an sm_XX line: 'nvcc fatal"), std::string::npos) << bad.error();
}

// The real 13.0 nvcc agrees with the table's 13.0 row; a probe missing one
// target and listing another is said both ways.
TEST(WatchProbe, DifferencesFromTheTablesRowAreNamed) {
  const compat::Toolkit* row = compat::find_toolkit(v("13.0"));
  ASSERT_NE(row, nullptr);
  Probe probe{.image = "i", .digest = "sha256:1", .nvcc = v("13.0.88"), .sass = *parse_gpu_code_list(k_nvcc_13_0)};
  EXPECT_EQ(table_differences(*row, probe), std::vector<std::string>{});
  std::erase(probe.sass, arch::ComputeCapability(7, 5));
  probe.sass.push_back(arch::ComputeCapability(13, 0));
  EXPECT_EQ(
      table_differences(*row, probe),
      (std::vector<std::string>{"the tables say CUDA 13.0 compiles for sm_75; its nvcc (13.0.88) does not list it",
                                "its nvcc (13.0.88) lists sm_130, which the tables' row of CUDA 13.0 lacks"}));
}

TEST(WatchProbe, TheProbesFileKeepsOneEntryPerDigestAndForgivesDamage) {
  char dir_template[] = "/tmp/orc-probe-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const fs::path file = fs::path(dir_template) / "probes.json";
  EXPECT_TRUE(read_probes(file).empty());
  const Probe a{.image = "r/nvidia/cuda:13.0.2", .digest = "sha256:aa", .nvcc = v("13.0.88"), .sass = {{9, 0}}};
  Probe b{.image = "r/nvidia/cuda:13.0.1", .digest = "sha256:bb", .nvcc = v("13.0.48"), .sass = {{8, 0}}};
  ASSERT_TRUE(record_probe(file, a));
  ASSERT_TRUE(record_probe(file, b));
  b.sass = {{8, 0}, {9, 0}};
  ASSERT_TRUE(record_probe(file, b));  // replaces, by digest
  const auto probes = read_probes(file);
  ASSERT_EQ(probes.size(), 2u);
  ASSERT_NE(find_probe(probes, "sha256:bb"), nullptr);
  EXPECT_EQ(find_probe(probes, "sha256:bb")->sass.size(), 2u);
  EXPECT_EQ(find_probe(probes, "sha256:aa")->nvcc, v("13.0.88"));
  EXPECT_EQ(find_probe(probes, ""), nullptr);
  std::ofstream(file) << "{\"schema\": 1, \"probes\": [";  // damaged: read as none, probed again
  EXPECT_TRUE(read_probes(file).empty());
  std::ofstream(file) << "{\"schema\": 9, \"probes\": []}";
  EXPECT_TRUE(read_probes(file).empty());
  fs::remove_all(dir_template);
}

// A release newer than every row becomes a row from its probe: the plan can
// use it, with the observed archs and an unknown minimum driver. The table
// that learns is a copy; the sourced one stays as cuda-compat.md says.
TEST(WatchProbe, TheTablesLearnANewReleaseAndCorrectAnUnconfirmedRow) {
  compat::ToolkitTable table = compat::ToolkitTable::known();
  const auto& last = table.rows().back();
  const util::Version next(std::vector<int>{last.version.major() + 1, 9});
  ASSERT_EQ(table.find(next), nullptr);
  const compat::Toolkit* learned = table.learn(util::Version(std::vector<int>{next.major(), next.minor(), 7}),
                                               {{12, 1}, {9, 0}, {10, 0}, {9, 0}}, "probe");
  ASSERT_NE(learned, nullptr);
  EXPECT_EQ(table.find(next), learned);
  EXPECT_EQ(compat::find_toolkit(next), nullptr) << "the sourced table learned nothing";
  EXPECT_EQ(learned->archs, (std::vector<arch::ComputeCapability>{{9, 0}, {10, 0}, {12, 1}}));
  EXPECT_TRUE(learned->released);
  EXPECT_TRUE(learned->min_driver.empty());
  EXPECT_TRUE(learned->is_unconfirmed("min_driver"));
  EXPECT_FALSE(learned->is_unconfirmed("archs"));
  EXPECT_EQ(learned->source, "learned: probe");
  // An older release the tables lack cannot be placed: refused.
  EXPECT_EQ(table.learn(v("10.3"), {{7, 0}}, "probe"), nullptr);

  // 13.1's archs are unconfirmed in the tables; a probe replaces them and
  // keeps the variants of the targets it lists.
  const compat::Toolkit* row = table.find(v("13.1"));
  ASSERT_NE(row, nullptr);
  ASSERT_TRUE(row->is_unconfirmed("archs"));
  table.learn(v("13.1.1"), *parse_gpu_code_list(k_nvcc_13_0), "nvcc --list-gpu-code in x");
  EXPECT_FALSE(row->is_unconfirmed("archs"));
  EXPECT_TRUE(row->accepts(arch::ComputeCapability(9, 0, arch::Variant::arch_specific)));
  EXPECT_TRUE(row->accepts(arch::ComputeCapability(12, 1)));
  EXPECT_TRUE(compat::find_toolkit(v("13.1"))->is_unconfirmed("archs")) << "the sourced row is unchanged";

  // A copy keeps the rows learned so far (and their sources) and learns
  // on its own; learning never moves a row a plan points to.
  compat::ToolkitTable copy = table;
  ASSERT_NE(copy.find(next), nullptr);
  EXPECT_EQ(copy.find(next)->source, "learned: probe");
  const compat::Toolkit* before = copy.find(v("13.0"));
  const util::Version after_next(std::vector<int>{next.major() + 1, 0});
  ASSERT_NE(copy.learn(after_next, {{9, 0}}, "probe 2"), nullptr);
  EXPECT_EQ(copy.find(v("13.0")), before);
  EXPECT_EQ(table.find(after_next), nullptr);
}

}  // namespace
}  // namespace orc::watch
