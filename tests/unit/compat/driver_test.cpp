// Driver facts from the toolkit table: PTX ISA <-> driver, runtime floors.
#include "orchestrator/compat/driver.hpp"

#include <gtest/gtest.h>

namespace orc::compat {
namespace {

util::Version v(const char* text) { return *util::Version::parse(text); }

TEST(DriverFacts, PtxIsaNeedsTheGaDriverOfTheFirstToolkitThatEmitsIt) {
  EXPECT_EQ(driver_for_ptx_isa(v("9.0")), v("580.65.06"));
  EXPECT_EQ(driver_for_ptx_isa(v("8.7")), v("570.26"));
  EXPECT_EQ(driver_for_ptx_isa(v("8.4")), v("550.54.14"));
  EXPECT_EQ(driver_for_ptx_isa(v("7.8")), v("520.61.05"));
  // 8.6 was 12.7's, which never shipped: the first shipped toolkit past it.
  EXPECT_EQ(driver_for_ptx_isa(v("8.6")), v("570.26"));
  EXPECT_FALSE(driver_for_ptx_isa(v("9.9")).has_value());
}

TEST(DriverFacts, ADriverCompilesUpToItsToolkitsIsa) {
  EXPECT_EQ(ptx_isa_for_driver(v("580.95.05")), v("9.0"));  // the H200 host's branch
  EXPECT_EQ(ptx_isa_for_driver(v("550.54.14")), v("8.4"));
  EXPECT_EQ(ptx_isa_for_driver(v("560.35.03")), v("8.5"));
  EXPECT_EQ(ptx_isa_for_driver(v("575.51.03")), v("8.8"));
  EXPECT_TRUE(ptx_isa_for_driver(v("440.33")).empty());
}

TEST(DriverFacts, RuntimeFloorsAreMinorVersionCompatibility) {
  EXPECT_EQ(driver_for_runtime(11), v("450.80.02"));
  EXPECT_EQ(driver_for_runtime(12), v("525.60.13"));
  EXPECT_EQ(driver_for_runtime(13), v("580.65.06"));
  EXPECT_FALSE(driver_for_runtime(10).has_value());
}

// 13.5's minimum is not known: a driver of 13.4's branch (R615) is not past
// the tables (13.5's PTX ISA 9.5 is too new for it), a later branch is.
TEST(DriverFacts, AnUnknownMinimumKeepsTheNewestBranchInsideTheTables) {
  EXPECT_FALSE(driver_for_ptx_isa(v("9.5")).has_value());
  EXPECT_EQ(ptx_isa_for_driver(v("615.0")), v("9.4"));
  EXPECT_FALSE(driver_newer_than_table(v("615.0")));
  EXPECT_FALSE(driver_newer_than_table(v("615.99.1")));
  EXPECT_TRUE(driver_newer_than_table(v("620.10")));
  EXPECT_FALSE(driver_newer_than_table(v("580.95.05")));
}

// NVIDIA's "CUDA Toolkit, Driver, and Architecture Matrix", column "Last
// Driver Support", row by row: Kepler R470; Maxwell, Pascal, Volta R580;
// Turing and later ongoing; Jetson's 6.2 and 7.2 are not in that table.
TEST(DriverFacts, TheLastBranchOfEachDroppedGeneration) {
  for (const arch::ComputeCapability cc : {arch::ComputeCapability{3, 0}, {3, 2}, {3, 5}, {3, 7}})
    EXPECT_EQ(last_driver_branch(cc), 470) << cc.dotted();
  for (const arch::ComputeCapability cc : {arch::ComputeCapability{5, 0}, {5, 2}, {5, 3}, {6, 0}, {6, 1}, {7, 0}})
    EXPECT_EQ(last_driver_branch(cc), 580) << cc.dotted();
  for (const arch::ComputeCapability cc :
       {arch::ComputeCapability{6, 2}, {7, 2}, {7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {12, 0}})
    EXPECT_FALSE(last_driver_branch(cc).has_value()) << cc.dotted();
}

// The first branch that drives each generation, where a source shows it
// (open-gpu-kernel-modules' tables and UVM backends, NVIDIA's notes): an
// H100 needs R520, which 515 lacks; a driver of a toolkit can be above it
// (CUDA 11.8's 520.61.05 > the first H100 driver 520.56.06), so the floor
// is the branch. Jetson parts run JetPack's driver: no row.
TEST(DriverFacts, TheFirstBranchOfEachGenerationASourceShows) {
  const auto branch = [](arch::ComputeCapability cc) {
    const auto first = first_driver_branch(cc);
    return first ? first->branch : 0;
  };
  EXPECT_EQ(branch({7, 5}), 410);
  EXPECT_EQ(branch({8, 0}), 450);
  EXPECT_EQ(branch({8, 6}), 455);
  EXPECT_EQ(branch({8, 9}), 520);
  EXPECT_EQ(branch({9, 0}), 520);
  EXPECT_EQ(branch(arch::ComputeCapability::parse("9.0a").value()), 520);
  EXPECT_EQ(branch({10, 0}), 570);
  EXPECT_EQ(branch({10, 3}), 575);
  EXPECT_EQ(branch({12, 0}), 570);
  EXPECT_EQ(branch({12, 1}), 575);
  EXPECT_EQ(first_driver_branch({9, 0})->first, "520.56.06");
  for (const arch::ComputeCapability cc : {arch::ComputeCapability{5, 3}, {6, 2}, {7, 2}, {8, 7}, {11, 0}})
    EXPECT_FALSE(first_driver_branch(cc).has_value()) << cc.dotted();
  // Every row says where it was read.
  for (const arch::ComputeCapability cc :
       {arch::ComputeCapability{7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {10, 3}, {12, 0}, {12, 1}})
    EXPECT_GT(first_driver_branch(cc)->source.size(), 20u) << cc.dotted();
}

}  // namespace
}  // namespace orc::compat
