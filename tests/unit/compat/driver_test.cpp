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

}  // namespace
}  // namespace orc::compat
