#include "orchestrator/compat/toolkits.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace orc::compat {
namespace {

using arch::ComputeCapability;
using util::Version;

ComputeCapability cc(std::string_view text) {
  auto parsed = ComputeCapability::parse(text);
  EXPECT_TRUE(parsed.has_value()) << text;
  return parsed.value_or(ComputeCapability{});
}

Version v(std::string_view text) { return Version::parse(text).value(); }

const Toolkit& tk(std::string_view version) {
  const Toolkit* t = find_toolkit(v(version));
  if (!t) throw std::runtime_error("no toolkit " + std::string(version));
  return *t;
}

// "75 80 90a", the notation the table and nvcc's --list-gpu-arch use.
std::string digits(const std::vector<ComputeCapability>& ccs) {
  std::string out;
  for (const auto& c : ccs) out += (out.empty() ? "" : " ") + c.digits();
  return out;
}

std::string version_of(const Toolkit* t) { return t ? t->version.str() : "none"; }

TEST(Toolkits, OneRowPerReleaseAscending) {
  std::vector<std::string> versions;
  for (const Toolkit& t : toolkit_table()) versions.push_back(t.version.str());
  const std::vector<std::string> expected = {"8.0",  "9.0",  "9.1",  "9.2",  "10.0", "10.1", "10.2", "11.0",
                                             "11.1", "11.2", "11.3", "11.4", "11.5", "11.6", "11.7", "11.8",
                                             "12.0", "12.1", "12.2", "12.3", "12.4", "12.5", "12.6", "12.7",
                                             "12.8", "12.9", "13.0", "13.1", "13.2", "13.3", "13.4", "13.5"};
  EXPECT_EQ(versions, expected);
  const auto table = toolkit_table();
  for (std::size_t i = 1; i < table.size(); ++i) EXPECT_LT(table[i - 1].version, table[i].version);
}

TEST(Toolkits, ArchListsAscendingAndUnique) {
  for (const Toolkit& t : toolkit_table()) {
    for (std::size_t i = 1; i < t.archs.size(); ++i)
      EXPECT_LT(t.archs[i - 1], t.archs[i]) << t.version.str() << " at " << t.archs[i].digits();
  }
}

TEST(Toolkits, OnlyCuda12_7IsUnreleased) {
  for (const Toolkit& t : toolkit_table()) EXPECT_EQ(t.released, t.version != v("12.7")) << t.version.str();
  EXPECT_TRUE(tk("12.7").archs.empty());
}

TEST(Toolkits, FindToolkitMatchesMajorMinor) {
  EXPECT_EQ(version_of(find_toolkit(v("12.4.1"))), "12.4");
  EXPECT_EQ(version_of(find_toolkit(v("13"))), "13.0");
  EXPECT_EQ(find_toolkit(v("7.5")), nullptr);
  EXPECT_EQ(version_of(find_toolkit(v("13.5.0"))), "13.5");
  EXPECT_EQ(find_toolkit(v("13.6")), nullptr);
}

TEST(Toolkits, Cuda13_0ArchsAreTheFirstHandList) {
  EXPECT_EQ(digits(tk("13.0").archs),
            "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f 120 120a 120f 121 121a 121f");
  EXPECT_TRUE(tk("13.0").unconfirmed.empty());
}

TEST(Toolkits, Cuda13_0RejectsWhatNvcc13_0Rejects) {
  const Toolkit& t = tk("13.0");
  for (auto text : {"70", "72", "101", "101a", "90f", "88a", "86f", "50", "107"})
    EXPECT_FALSE(t.accepts(cc(text))) << text;
  for (auto text : {"75", "88", "90a", "110f", "121a"}) EXPECT_TRUE(t.accepts(cc(text))) << text;
}

TEST(Toolkits, ArchSpecificTargetsStartAt12_0) {
  EXPECT_TRUE(tk("12.4").accepts(cc("90a")));
  EXPECT_FALSE(tk("11.8").accepts(cc("90a")));
  EXPECT_TRUE(tk("11.8").accepts(cc("90")));
  EXPECT_TRUE(tk("11.8").accepts(cc("89")));
  EXPECT_EQ(digits(tk("11.8").archs), "35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90");
}

TEST(Toolkits, FamilyTargetsStartAt12_9) {
  EXPECT_FALSE(tk("12.8").accepts(cc("100f")));
  EXPECT_TRUE(tk("12.8").accepts(cc("101a")));
  for (auto text : {"100f", "101f", "103f", "120f", "121f", "103a", "121a"})
    EXPECT_TRUE(tk("12.9").accepts(cc(text))) << text;
  EXPECT_FALSE(tk("12.9").accepts(cc("110")));
}

TEST(Toolkits, Cuda13_4AddsRubin) {
  for (auto text : {"107", "107a", "107f"}) {
    EXPECT_TRUE(tk("13.4").accepts(cc(text))) << text;
    EXPECT_FALSE(tk("13.3").accepts(cc(text))) << text;
  }
}

TEST(Toolkits, Cuda8_0AcceptsFermi) {
  EXPECT_EQ(digits(tk("8.0").archs), "20 21 30 32 35 37 50 52 53 60 61 62");
  EXPECT_TRUE(tk("8.0").is_deprecated(cc("2.0")));
  EXPECT_FALSE(tk("9.0").accepts(cc("2.1")));
}

TEST(Toolkits, DeprecationsFollowNvccWarnings) {
  EXPECT_TRUE(tk("11.8").accepts(cc("35")));
  EXPECT_TRUE(tk("11.8").is_deprecated(cc("35")));
  EXPECT_TRUE(tk("11.8").is_deprecated(cc("37")));
  EXPECT_FALSE(tk("11.8").is_deprecated(cc("50")));  // taken off the list in 11.6
  EXPECT_TRUE(tk("11.2").is_deprecated(cc("50")));
  EXPECT_FALSE(tk("12.4").is_deprecated(cc("50")));
  EXPECT_TRUE(tk("12.8").is_deprecated(cc("72")));
  EXPECT_FALSE(tk("12.8").is_deprecated(cc("75")));
}

TEST(Toolkits, RemovedIsRelativeToThePreviousRelease) {
  EXPECT_EQ(digits(tk("9.0").removed), "20 21");
  EXPECT_EQ(digits(tk("11.0").removed), "30 32");
  EXPECT_EQ(digits(tk("12.0").removed), "35 37");
  EXPECT_EQ(digits(tk("13.0").removed), "50 52 53 60 61 62 70 72 101 101a 101f");
  EXPECT_TRUE(tk("12.4").removed.empty());
  // 12.8 follows 12.6: the unreleased 12.7 must not make everything "removed".
  EXPECT_TRUE(tk("12.8").removed.empty());
  EXPECT_TRUE(tk("8.0").removed.empty());
}

TEST(Toolkits, DefaultArchs) {
  EXPECT_EQ(tk("13.0").default_arch, cc("7.5"));
  EXPECT_EQ(tk("12.4").default_arch, cc("5.2"));
  EXPECT_EQ(tk("11.8").default_arch, cc("5.2"));
  EXPECT_EQ(tk("10.2").default_arch, cc("3.0"));
  EXPECT_EQ(tk("8.0").default_arch, cc("2.0"));
}

TEST(Toolkits, MinimumLinuxDrivers) {
  EXPECT_EQ(tk("13.0").min_driver, v("580.65.06"));
  EXPECT_EQ(tk("12.4").min_driver, v("550.54.14"));
  EXPECT_EQ(tk("11.8").min_driver, v("520.61.05"));
  EXPECT_EQ(tk("12.8").min_driver, v("570.26"));
  EXPECT_EQ(tk("13.3").min_driver, v("610.43.02"));
  EXPECT_EQ(tk("13.4").min_driver, v("615.0"));
  EXPECT_TRUE(tk("13.3").is_unconfirmed("min_driver"));
  EXPECT_TRUE(tk("13.4").is_unconfirmed("min_driver"));
  EXPECT_FALSE(tk("13.2").is_unconfirmed("min_driver"));
  // 13.5: no stored source names its driver; the row says so instead of guessing.
  EXPECT_TRUE(tk("13.5").min_driver.empty());
  EXPECT_TRUE(tk("13.5").is_unconfirmed("min_driver"));
  EXPECT_FALSE(tk("13.5").driver_meets_minimum(v("999.99")));
  EXPECT_TRUE(tk("13.4").driver_meets_minimum(v("615.0")));
  EXPECT_FALSE(tk("13.4").driver_meets_minimum(v("610.43.02")));
  // A newer toolkit never needs an older driver.
  const Toolkit* previous = nullptr;
  for (const Toolkit& t : toolkit_table()) {
    if (!t.released || t.min_driver.empty()) continue;
    if (previous) {
      EXPECT_LT(previous->min_driver, t.min_driver) << t.version.str();
    }
    previous = &t;
  }
}

TEST(Toolkits, HostCompilers) {
  EXPECT_EQ(tk("11.8").max_gcc, 11);
  EXPECT_EQ(tk("12.4").max_gcc, 13);
  EXPECT_EQ(tk("12.8").max_gcc, 14);
  EXPECT_EQ(tk("13.0").max_gcc, 15);
  EXPECT_EQ(tk("11.8").max_clang, 14);
  EXPECT_EQ(tk("13.0").max_clang, 20);
  EXPECT_EQ(tk("13.1").max_clang, 21);
  EXPECT_TRUE(tk("13.4").is_unconfirmed("max_gcc"));
  EXPECT_TRUE(tk("13.5").is_unconfirmed("max_gcc"));
  EXPECT_TRUE(tk("13.5").is_unconfirmed("max_clang"));
  EXPECT_TRUE(tk("12.3").is_unconfirmed("max_gcc"));
}

TEST(Toolkits, PtxIsaOnlyWhereKnown) {
  EXPECT_EQ(tk("12.9").ptx_isa, v("8.8"));
  EXPECT_EQ(tk("13.0").ptx_isa, v("9.0"));
  EXPECT_EQ(tk("13.2").ptx_isa, v("9.2"));
  EXPECT_EQ(tk("13.4").ptx_isa, v("9.4"));
  // NVIDIA's PTX ISA release history; 11.8, 12.4 and 13.0 also seen first-hand.
  EXPECT_EQ(tk("13.1").ptx_isa, v("9.1"));
  EXPECT_EQ(tk("11.8").ptx_isa, v("7.8"));
  EXPECT_EQ(tk("12.4").ptx_isa, v("8.4"));
  EXPECT_EQ(tk("12.6").ptx_isa, v("8.5"));  // 12.6 still emits 8.5 (openxla/xla#16504)
  EXPECT_EQ(tk("12.8").ptx_isa, v("8.7"));  // 8.6 was 12.7's, which never shipped
  // The PTX ISA release history and CCCL both give 13.3 PTX ISA 9.3 (issue 13).
  EXPECT_FALSE(tk("13.3").is_unconfirmed("ptx_isa"));
  EXPECT_TRUE(tk("10.2").ptx_isa.empty());
  // 13.5 emits 9.5 by one third-party source only (apache/tvm-tirx#241).
  EXPECT_EQ(tk("13.5").ptx_isa, v("9.5"));
  EXPECT_TRUE(tk("13.5").is_unconfirmed("ptx_isa"));
}

// Issue 13: no first-hand nvcc of 13.1 - 13.4 exists here, so every one of
// them marks what only an nvcc listing settles, alike.
TEST(Toolkits, MarksOfTheToolkitsNoNvccWasRunForAgree) {
  for (const char* version : {"13.1", "13.2", "13.3", "13.4", "13.5"})
    for (const char* field : {"archs", "deprecated", "removed", "default_arch"})
      EXPECT_TRUE(tk(version).is_unconfirmed(field)) << version << " " << field;
}

TEST(Toolkits, UnconfirmedMarks) {
  EXPECT_TRUE(tk("13.1").is_unconfirmed("archs"));
  EXPECT_TRUE(tk("13.1").is_unconfirmed("default_arch"));
  EXPECT_FALSE(tk("13.0").is_unconfirmed("archs"));
  EXPECT_FALSE(tk("12.4").is_unconfirmed("archs"));
  EXPECT_TRUE(tk("11.3").is_unconfirmed("archs"));
  EXPECT_TRUE(tk("11.0").is_unconfirmed("default_arch"));
  EXPECT_TRUE(tk("9.1").is_unconfirmed("min_driver"));
  EXPECT_TRUE(tk("13.4").is_unconfirmed("archs"));
}

// clang says nvcc 9.1 added sm_72, CMake and Spack say 9.0: the table takes
// 9.1 and says it is unsure on both rows.
TEST(Toolkits, Sm72DisagreementIsMarked) {
  EXPECT_FALSE(tk("9.0").accepts(cc("72")));
  EXPECT_TRUE(tk("9.1").accepts(cc("72")));
  EXPECT_TRUE(tk("9.0").is_unconfirmed("archs"));
  EXPECT_TRUE(tk("9.1").is_unconfirmed("archs"));
}

TEST(Toolkits, EveryDefaultArchIsAccepted) {
  for (const Toolkit& t : toolkit_table())
    if (t.released) {
      EXPECT_TRUE(t.accepts(t.default_arch)) << t.version.str();
    }
}

TEST(ToolkitWindow, FirstAndLastReleasedToolkit) {
  auto window = [](std::string_view text) {
    const ToolkitWindow w = toolkit_window(cc(text));
    return version_of(w.first) + ".." + version_of(w.last);
  };
  // K80: CUDA 6.5 .. 11.8 in the reference; this table starts at 8.0.
  EXPECT_EQ(window("3.7"), "8.0..11.8");
  EXPECT_EQ(window("2.0"), "8.0..8.0");
  EXPECT_EQ(window("3.0"), "8.0..10.2");
  EXPECT_EQ(window("5.0"), "8.0..12.9");
  EXPECT_EQ(window("7.2"), "9.1..12.9");
  EXPECT_EQ(window("8.7"), "11.4..13.5");
  EXPECT_EQ(window("9.0a"), "12.0..13.5");
  EXPECT_EQ(window("10.1"), "12.8..12.9");
  EXPECT_EQ(window("11.0"), "13.0..13.5");
  EXPECT_EQ(window("12.0"), "12.8..13.5");
  EXPECT_EQ(window("10.7"), "13.4..13.5");
  EXPECT_EQ(window("9.9"), "none..none");
  EXPECT_EQ(window("9.0f"), "none..none");
}

TEST(ToolkitWindow, NeverNamesTheUnreleased12_7) {
  for (const Toolkit& t : toolkit_table()) {
    for (const auto& c : t.archs) {
      const ToolkitWindow w = toolkit_window(c);
      ASSERT_NE(w.first, nullptr);
      EXPECT_TRUE(w.first->released && w.last->released) << c.digits();
    }
  }
}

}  // namespace
}  // namespace orc::compat
