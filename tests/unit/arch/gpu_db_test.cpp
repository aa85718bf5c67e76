#include "orchestrator/arch/gpu_db.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace orc::arch {
namespace {

// The CC a lookup gives, or a sentinel that fails every comparison with a
// real CC and prints the lookup error, so one bad row does not stop the loop.
std::string describe(const std::expected<Gpu, GpuLookupError>& result) {
  if (!result) return "error: " + result.error().message + " (suggestion '" + result.error().suggestion + "')";
  return std::string(result->name) + " " + result->cc.dotted();
}

struct Spelling {
  std::string_view query;
  std::string_view canonical;
  ComputeCapability cc;
};

// Names as users type them and as nvidia-smi / torch.cuda.get_device_name()
// print them.
TEST(GpuDb, ResolvesEverySpellingUsersAndToolsWrite) {
  const std::vector<Spelling> cases = {
      {"RTX 4090", "GeForce RTX 4090", {8, 9}},
      {"GeForce RTX 4090", "GeForce RTX 4090", {8, 9}},
      {"rtx4090", "GeForce RTX 4090", {8, 9}},
      {"NVIDIA GeForce RTX 4090", "GeForce RTX 4090", {8, 9}},
      {"  nvidia geforce rtx 4090  ", "GeForce RTX 4090", {8, 9}},
      {"rtx_4090", "GeForce RTX 4090", {8, 9}},
      {"NVIDIA H100 80GB HBM3", "H100", {9, 0}},
      {"NVIDIA H100 PCIe", "H100", {9, 0}},
      {"H100 NVL", "H100", {9, 0}},
      {"H100 SXM5 80GB", "H100", {9, 0}},
      {"NVIDIA A100-SXM4-40GB", "A100", {8, 0}},
      {"NVIDIA A100-PCIE-40GB", "A100", {8, 0}},
      {"NVIDIA A100 80GB PCIe", "A100", {8, 0}},
      {"NVIDIA A100-SXM4-80GB MIG 1g.10gb", "A100", {8, 0}},
      {"Tesla V100-SXM2-16GB", "Tesla V100", {7, 0}},
      {"V100", "Tesla V100", {7, 0}},
      {"Tesla T4", "Tesla T4", {7, 5}},
      {"T4", "Tesla T4", {7, 5}},
      {"NVIDIA H200", "H200", {9, 0}},
      {"NVIDIA H200 NVL", "H200", {9, 0}},
      {"NVIDIA GH200 480GB", "GH200", {9, 0}},
      {"NVIDIA GH200 144G HBM3e", "GH200", {9, 0}},
      {"GB200 NVL72", "GB200", {10, 0}},
      {"NVIDIA RTX A6000", "RTX A6000", {8, 6}},
      {"Tesla K80", "Tesla K80", {3, 7}},
      {"K80", "Tesla K80", {3, 7}},
      {"Tesla P100-PCIE-16GB", "Tesla P100", {6, 0}},
      {"NVIDIA L40S", "L40S", {8, 9}},
      {"NVIDIA GB10", "GB10", {12, 1}},
      {"NVIDIA GeForce RTX 3060 Ti", "GeForce RTX 3060 Ti", {8, 6}},
      {"RTX 3060Ti", "GeForce RTX 3060 Ti", {8, 6}},
      {"GeForce RTX 4070 Ti SUPER", "GeForce RTX 4070 Ti SUPER", {8, 9}},
      {"TITAN X (Pascal)", "TITAN X (Pascal)", {6, 1}},
      {"NVIDIA TITAN Xp", "TITAN Xp", {6, 1}},
      {"GeForce GTX TITAN X", "GeForce GTX TITAN X", {5, 2}},
      {"jetson agx orin 64gb", "Jetson AGX Orin", {8, 7}},
      {"NVIDIA Jetson Xavier NX", "Jetson Xavier NX", {7, 2}},
  };
  for (const Spelling& c : cases) {
    SCOPED_TRACE(c.query);
    const auto result = find_gpu(c.query);
    ASSERT_TRUE(result.has_value()) << describe(result);
    EXPECT_EQ(result->name, c.canonical);
    EXPECT_EQ(result->cc, c.cc) << describe(result);
  }
}

// The four "6000" workstation cards span four architectures; each must be
// reachable by its own name, and Quadro names work with or without "Quadro".
TEST(GpuDb, KeepsTheSixThousandsApartAndQuadroOptional) {
  const std::vector<Spelling> cases = {
      {"RTX 6000", "Quadro RTX 6000", {7, 5}},
      {"Quadro RTX 6000", "Quadro RTX 6000", {7, 5}},
      {"RTX 6000 Ada", "RTX 6000 Ada", {8, 9}},
      {"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada", {8, 9}},
      {"RTX A6000", "RTX A6000", {8, 6}},
      {"RTX PRO 6000 Blackwell", "RTX PRO 6000 Blackwell", {12, 0}},
      {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000 Blackwell", {12, 0}},
      {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX PRO 6000 Blackwell Max-Q", {12, 0}},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell Server Edition", {12, 0}},
      {"Quadro RTX 8000", "Quadro RTX 8000", {7, 5}},
      {"RTX 8000", "Quadro RTX 8000", {7, 5}},
      {"Quadro P6000", "Quadro P6000", {6, 1}},
      {"P6000", "Quadro P6000", {6, 1}},
      {"Quadro GP100", "Quadro GP100", {6, 0}},
      {"Quadro GV100", "Quadro GV100", {7, 0}},
  };
  for (const Spelling& c : cases) {
    SCOPED_TRACE(c.query);
    const auto result = find_gpu(c.query);
    ASSERT_TRUE(result.has_value()) << describe(result);
    EXPECT_EQ(result->name, c.canonical);
    EXPECT_EQ(result->cc, c.cc) << describe(result);
  }
  const auto server = find_gpu("RTX PRO 6000 Blackwell Server Edition");
  ASSERT_TRUE(server.has_value());
  EXPECT_EQ(server->segment, Segment::datacenter);
  const auto workstation = find_gpu("RTX PRO 6000 Blackwell");
  ASSERT_TRUE(workstation.has_value());
  EXPECT_EQ(workstation->segment, Segment::workstation);
}

struct Representative {
  std::string_view query;
  ComputeCapability cc;
  std::string_view architecture;
  Segment segment;
};

// One product per row of cuda-compat.md 1.1, so a row typed at the wrong CC
// or architecture fails here.
TEST(GpuDb, MapsARepresentativeOfEveryReferenceRow) {
  const std::vector<Representative> rows = {
      {"Tesla K10", {3, 0}, "Kepler", Segment::datacenter},
      {"GeForce GTX 680", {3, 0}, "Kepler", Segment::geforce},
      {"Jetson TK1", {3, 2}, "Kepler", Segment::jetson},
      {"Tesla K20", {3, 5}, "Kepler", Segment::datacenter},
      {"Tesla K40", {3, 5}, "Kepler", Segment::datacenter},
      {"GeForce GTX TITAN Black", {3, 5}, "Kepler", Segment::geforce},
      {"Tesla K80", {3, 7}, "Kepler", Segment::datacenter},
      {"GeForce GTX 750 Ti", {5, 0}, "Maxwell", Segment::geforce},
      {"Quadro K2200", {5, 0}, "Maxwell", Segment::workstation},
      {"Tesla M40", {5, 2}, "Maxwell", Segment::datacenter},
      {"Tesla M60", {5, 2}, "Maxwell", Segment::datacenter},
      {"Jetson Nano", {5, 3}, "Maxwell", Segment::jetson},
      {"Jetson TX1", {5, 3}, "Maxwell", Segment::jetson},
      {"Tesla P100", {6, 0}, "Pascal", Segment::datacenter},
      {"Tesla P40", {6, 1}, "Pascal", Segment::datacenter},
      {"Tesla P4", {6, 1}, "Pascal", Segment::datacenter},
      {"GeForce GTX 1080 Ti", {6, 1}, "Pascal", Segment::geforce},
      {"Jetson TX2", {6, 2}, "Pascal", Segment::jetson},
      {"Tesla V100", {7, 0}, "Volta", Segment::datacenter},
      {"TITAN V", {7, 0}, "Volta", Segment::geforce},
      {"Jetson AGX Xavier", {7, 2}, "Volta", Segment::jetson},
      {"Tesla T4", {7, 5}, "Turing", Segment::datacenter},
      {"GeForce RTX 2080 Ti", {7, 5}, "Turing", Segment::geforce},
      {"T1000", {7, 5}, "Turing", Segment::workstation},
      {"A100", {8, 0}, "Ampere", Segment::datacenter},
      {"A30", {8, 0}, "Ampere", Segment::datacenter},
      {"A40", {8, 6}, "Ampere", Segment::datacenter},
      {"A10", {8, 6}, "Ampere", Segment::datacenter},
      {"A16", {8, 6}, "Ampere", Segment::datacenter},
      {"A2", {8, 6}, "Ampere", Segment::datacenter},
      {"GeForce RTX 3090", {8, 6}, "Ampere", Segment::geforce},
      {"RTX A2000", {8, 6}, "Ampere", Segment::workstation},
      {"Jetson AGX Orin", {8, 7}, "Ampere", Segment::jetson},
      {"Jetson Orin Nano", {8, 7}, "Ampere", Segment::jetson},
      {"L4", {8, 9}, "Ada Lovelace", Segment::datacenter},
      {"L40", {8, 9}, "Ada Lovelace", Segment::datacenter},
      {"GeForce RTX 4090", {8, 9}, "Ada Lovelace", Segment::geforce},
      {"RTX 2000 Ada", {8, 9}, "Ada Lovelace", Segment::workstation},
      {"H100", {9, 0}, "Hopper", Segment::datacenter},
      {"H200", {9, 0}, "Hopper", Segment::datacenter},
      {"GH200", {9, 0}, "Hopper", Segment::datacenter},
      {"B200", {10, 0}, "Blackwell", Segment::datacenter},
      {"GB200", {10, 0}, "Blackwell", Segment::datacenter},
      {"B300", {10, 3}, "Blackwell Ultra", Segment::datacenter},
      {"GB300", {10, 3}, "Blackwell Ultra", Segment::datacenter},
      {"Rubin", {10, 7}, "Rubin", Segment::datacenter},
      {"Jetson AGX Thor", {11, 0}, "Blackwell", Segment::jetson},
      {"Jetson T5000", {11, 0}, "Blackwell", Segment::jetson},
      {"Jetson T4000", {11, 0}, "Blackwell", Segment::jetson},
      {"GeForce RTX 5090", {12, 0}, "Blackwell", Segment::geforce},
      {"GeForce RTX 5050", {12, 0}, "Blackwell", Segment::geforce},
      {"GB10", {12, 1}, "Blackwell", Segment::datacenter},
  };
  for (const Representative& r : rows) {
    SCOPED_TRACE(r.query);
    const auto result = find_gpu(r.query);
    ASSERT_TRUE(result.has_value()) << describe(result);
    EXPECT_EQ(result->cc, r.cc) << describe(result);
    EXPECT_EQ(result->architecture, r.architecture);
    EXPECT_EQ(result->segment, r.segment);
  }
}

// The reference's shorthand spelled out: every model it abbreviates is its
// own row at the row's CC.
TEST(GpuDb, ExpandsTheReferenceShorthand) {
  const std::map<ComputeCapability, std::vector<std::string_view>> expected = {
      {{3, 0}, {"GeForce GTX 680", "GeForce GTX 690", "GeForce GTX 770", "GeForce GTX 760", "GeForce GTX 660",
                "Quadro K5000", "Quadro K4200", "Quadro K4000", "Quadro K2000", "Quadro K600", "Quadro K420"}},
      {{3, 5}, {"GeForce GTX 780", "GeForce GTX 780 Ti", "GeForce GTX TITAN", "GeForce GTX TITAN Z", "Quadro K6000",
                "Quadro K5200"}},
      {{5, 0}, {"GeForce GTX 750", "GeForce GTX 960M", "GeForce GTX 950M", "GeForce 940M", "Quadro K1200",
                "Quadro K620"}},
      {{5, 2}, {"GeForce GTX 980 Ti", "GeForce GTX 980", "GeForce GTX 970", "GeForce GTX 960", "GeForce GTX 950",
                "Quadro M6000", "Quadro M5000", "Quadro M4000", "Quadro M2000"}},
      {{6, 1}, {"GeForce GTX 1080", "GeForce GTX 1070 Ti", "GeForce GTX 1070", "GeForce GTX 1060",
                "GeForce GTX 1050", "TITAN X (Pascal)", "TITAN Xp"}},
      {{7, 5}, {"GeForce RTX 2060", "GeForce RTX 2060 SUPER", "GeForce RTX 2070", "GeForce RTX 2070 SUPER",
                "GeForce RTX 2080", "GeForce RTX 2080 SUPER", "GeForce RTX 2080 Ti", "GeForce GTX 1650",
                "GeForce GTX 1650 SUPER", "GeForce GTX 1660", "GeForce GTX 1660 SUPER", "GeForce GTX 1660 Ti",
                "TITAN RTX", "Quadro RTX 4000", "Quadro RTX 5000", "Quadro RTX 6000", "Quadro RTX 8000", "T400",
                "T600", "T1000"}},
      {{8, 6}, {"GeForce RTX 3050", "GeForce RTX 3060", "GeForce RTX 3060 Ti", "GeForce RTX 3070",
                "GeForce RTX 3070 Ti", "GeForce RTX 3080", "GeForce RTX 3080 Ti", "GeForce RTX 3090",
                "GeForce RTX 3090 Ti", "RTX A6000", "RTX A5000", "RTX A4000", "RTX A3000", "RTX A2000"}},
      {{8, 7}, {"Jetson AGX Orin", "Jetson Orin NX", "Jetson Orin Nano"}},
      {{8, 9}, {"L4", "L40", "L40S", "GeForce RTX 4060", "GeForce RTX 4060 Ti", "GeForce RTX 4070",
                "GeForce RTX 4070 SUPER", "GeForce RTX 4070 Ti", "GeForce RTX 4070 Ti SUPER", "GeForce RTX 4080",
                "GeForce RTX 4080 SUPER", "GeForce RTX 4090", "RTX 6000 Ada", "RTX 5000 Ada", "RTX 4500 Ada",
                "RTX 4000 Ada", "RTX 2000 Ada"}},
      {{12, 0}, {"GeForce RTX 5090", "GeForce RTX 5080", "GeForce RTX 5070 Ti", "GeForce RTX 5070",
                 "GeForce RTX 5060 Ti", "GeForce RTX 5060", "GeForce RTX 5050", "RTX PRO 6000 Blackwell",
                 "RTX PRO 6000 Blackwell Max-Q", "RTX PRO 5000 Blackwell", "RTX PRO 4500 Blackwell",
                 "RTX PRO 4000 Blackwell", "RTX PRO 4000 Blackwell SFF", "RTX PRO 2000 Blackwell",
                 "RTX PRO 6000 Blackwell Server Edition", "RTX PRO 4500 Blackwell Server Edition"}},
  };
  const auto table = gpu_table();
  for (const auto& [cc, names] : expected) {
    for (std::string_view name : names) {
      SCOPED_TRACE(name);
      const auto row = std::ranges::find(table, name, &Gpu::name);
      ASSERT_NE(row, table.end()) << "no table row named " << name;
      EXPECT_EQ(row->cc, cc) << name << " is at " << row->cc.dotted();
    }
  }
}

// Exactly the reference's CCs have products: 8.8 has no confirmed product and
// 10.1 is Thor's pre-13.0 number, which now lives at 11.0.
TEST(GpuDb, CoversExactlyTheReferenceComputeCapabilities) {
  const std::set<ComputeCapability> expected = {
      {3, 0}, {3, 2}, {3, 5}, {3, 7}, {5, 0}, {5, 2}, {5, 3}, {6, 0},  {6, 1},  {6, 2},  {7, 0},  {7, 2},
      {7, 5}, {8, 0}, {8, 6}, {8, 7}, {8, 9}, {9, 0}, {10, 0}, {10, 3}, {10, 7}, {11, 0}, {12, 0}, {12, 1},
  };
  std::set<ComputeCapability> seen;
  for (const Gpu& gpu : gpu_table()) {
    // Devices report plain CCs; 'a'/'f' are compile targets, not products.
    EXPECT_EQ(gpu.cc.variant(), Variant::none) << gpu.name;
    seen.insert(gpu.cc);
  }
  EXPECT_EQ(seen, expected);
}

// Every key is distinct and non-empty, and every row is reachable by its own
// canonical name in any case, with or without the vendor prefix.
TEST(GpuDb, NormalizedKeysAreUniqueAndEveryRowIsReachable) {
  std::map<std::string, std::string_view> owner;
  std::set<std::string_view> names;
  for (const Gpu& gpu : gpu_table()) {
    const std::string key = normalize_gpu_name(gpu.name);
    EXPECT_FALSE(key.empty()) << gpu.name;
    const auto [it, inserted] = owner.emplace(key, gpu.name);
    EXPECT_TRUE(inserted) << "'" << gpu.name << "' and '" << it->second << "' both normalize to '" << key << "'";
    EXPECT_TRUE(names.insert(gpu.name).second) << "duplicate name " << gpu.name;

    for (const std::string& query : {std::string(gpu.name), "NVIDIA " + std::string(gpu.name)}) {
      const auto result = find_gpu(query);
      ASSERT_TRUE(result.has_value()) << query << ": " << describe(result);
      EXPECT_EQ(result->name, gpu.name) << query;
    }
  }
  EXPECT_GE(gpu_table().size(), 150u);
}

TEST(GpuDb, NormalizeDropsVendorSeparatorAndBoardWords) {
  EXPECT_EQ(normalize_gpu_name("NVIDIA GeForce RTX 4090"), "rtx4090");
  EXPECT_EQ(normalize_gpu_name("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(normalize_gpu_name("NVIDIA A100-SXM4-40GB"), "a100");
  EXPECT_EQ(normalize_gpu_name("Tesla V100-SXM2-16GB"), "v100");
  EXPECT_EQ(normalize_gpu_name("H200 NVL HBM3e"), "h200");
  EXPECT_EQ(normalize_gpu_name("A100 MIG 3g.40gb"), "a100");
  EXPECT_EQ(normalize_gpu_name("Quadro RTX 8000"), "rtx8000");
  EXPECT_EQ(normalize_gpu_name("TITAN X (Pascal)"), "titanxpascal");
  EXPECT_EQ(normalize_gpu_name("RTX PRO 6000 Blackwell Max-Q"), "rtxpro6000blackwellmaxq");
  // Product names that merely contain "gb" or digits stay intact.
  EXPECT_EQ(normalize_gpu_name("GB200"), "gb200");
  EXPECT_EQ(normalize_gpu_name("GB10"), "gb10");
  EXPECT_EQ(normalize_gpu_name(""), "");
}

TEST(GpuDb, UnknownNameSuggestsTheClosestProduct) {
  const auto result = find_gpu("RTX 4909");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "unknown GPU 'RTX 4909'");
  EXPECT_EQ(result.error().suggestion, "GeForce RTX 4090");

  const auto prefixed = find_gpu("NVIDIA GeForce RTX 4909");
  ASSERT_FALSE(prefixed.has_value());
  EXPECT_EQ(prefixed.error().suggestion, "GeForce RTX 4090");

  const auto orin = find_gpu("Jetson AGX Orn");
  ASSERT_FALSE(orin.has_value());
  EXPECT_EQ(orin.error().suggestion, "Jetson AGX Orin");
}

TEST(GpuDb, UnknownGarbageHasNoSuggestion) {
  for (std::string_view query : {"banana smoothie deluxe", "Radeon RX 7900 XTX", "zzzzzzzz"}) {
    SCOPED_TRACE(query);
    const auto result = find_gpu(query);
    ASSERT_FALSE(result.has_value()) << describe(result);
    EXPECT_EQ(result.error().message, "unknown GPU '" + std::string(query) + "'");
    EXPECT_EQ(result.error().suggestion, "");
  }
}

// A name made only of dropped words normalizes to "" and must not match.
TEST(GpuDb, NamesOfOnlyDroppedWordsAreUnknown) {
  for (std::string_view query : {"", "NVIDIA", "NVIDIA 80GB PCIe"}) {
    SCOPED_TRACE(query);
    const auto result = find_gpu(query);
    ASSERT_FALSE(result.has_value()) << describe(result);
    EXPECT_EQ(result.error().message, "unknown GPU '" + std::string(query) + "'");
  }
}

TEST(GpuDb, ArchitectureOfEveryGeneration) {
  EXPECT_EQ(architecture_of({3, 0}), "Kepler");
  EXPECT_EQ(architecture_of({3, 7}), "Kepler");
  EXPECT_EQ(architecture_of({5, 3}), "Maxwell");
  EXPECT_EQ(architecture_of({6, 2}), "Pascal");
  EXPECT_EQ(architecture_of({7, 2}), "Volta");
  EXPECT_EQ(architecture_of({7, 5}), "Turing");
  EXPECT_EQ(architecture_of({8, 0}), "Ampere");
  EXPECT_EQ(architecture_of({8, 7}), "Ampere");
  EXPECT_EQ(architecture_of({8, 9}), "Ada Lovelace");
  EXPECT_EQ(architecture_of({9, 0}), "Hopper");
  EXPECT_EQ(architecture_of({10, 0}), "Blackwell");
  EXPECT_EQ(architecture_of({10, 3}), "Blackwell Ultra");
  EXPECT_EQ(architecture_of({10, 7}), "Rubin");
  EXPECT_EQ(architecture_of({11, 0}), "Blackwell");
  EXPECT_EQ(architecture_of({12, 0}), "Blackwell");
  EXPECT_EQ(architecture_of({12, 1}), "Blackwell");
  // 'a' and 'f' targets are the same silicon as the plain CC.
  EXPECT_EQ(architecture_of({9, 0, Variant::arch_specific}), "Hopper");
  EXPECT_EQ(architecture_of({10, 0, Variant::family}), "Blackwell");
  // No table row: unconfirmed 8.8, renamed 10.1, out-of-range Fermi.
  EXPECT_EQ(architecture_of({8, 8}), "");
  EXPECT_EQ(architecture_of({10, 1}), "");
  EXPECT_EQ(architecture_of({2, 0}), "");
}

// One CC, one architecture: a row that disagrees with its neighbours would
// make architecture_of() depend on table order.
TEST(GpuDb, EveryRowAgreesWithArchitectureOf) {
  for (const Gpu& gpu : gpu_table()) EXPECT_EQ(gpu.architecture, architecture_of(gpu.cc)) << gpu.name;
}

TEST(GpuDb, SegmentNames) {
  EXPECT_EQ(segment_name(Segment::datacenter), "datacenter");
  EXPECT_EQ(segment_name(Segment::geforce), "geforce");
  EXPECT_EQ(segment_name(Segment::workstation), "workstation");
  EXPECT_EQ(segment_name(Segment::jetson), "jetson");
}

}  // namespace
}  // namespace orc::arch
