// NVIDIA_REQUIRE_ARCH from what binaries embed: the device CCs on which every
// binary has native SASS or PTX to JIT, written in the container toolkit's
// constraint syntax (space = or, comma = and).
#include "orchestrator/arch/requirement.hpp"

#include <gtest/gtest.h>

namespace orc::arch {
namespace {

ComputeCapability cc(std::string_view text) { return *ComputeCapability::parse(text); }

std::string expr(std::vector<Targets> binaries) { return require_arch(runnable_on(binaries)); }

TEST(RequireArch, SassRunsWithinItsMajorAndPtxOnEveryNewerDevice) {
  // sm_80 SASS: 8.0 to 8.9 (8.6 and 8.9 run sm_80 cubins), not 9.0.
  EXPECT_EQ(expr({{.sass = {cc("80")}, .ptx = {}}}), "arch>=8.0,arch<9.0");
  // sm_80 + sm_90 SASS, compute_90 PTX: Ampere, Ada, and Hopper on.
  EXPECT_EQ(expr({{.sass = {cc("80"), cc("90")}, .ptx = {cc("90")}}}), "arch>=8.0");
  // sm_80 SASS and compute_90 PTX: Ampere and Ada natively, 9.0 on by JIT.
  EXPECT_EQ(expr({{.sass = {cc("80")}, .ptx = {cc("90")}}}), "arch>=8.0");
  // sm_75 and sm_90 SASS only: a gap for Ampere.
  EXPECT_EQ(expr({{.sass = {cc("75"), cc("90")}, .ptx = {}}}), "arch>=7.5,arch<8.0 arch>=9.0,arch<10.0");
  // Architecture-specific targets run on their CC alone.
  EXPECT_EQ(expr({{.sass = {cc("90a")}, .ptx = {cc("90a")}}}), "arch=9.0");
  // Family-specific SASS runs within its family from its minor up.
  EXPECT_EQ(expr({{.sass = {cc("100f")}, .ptx = {}}}), "arch>=10.0,arch<11.0");
}

TEST(RequireArch, EveryBinaryOfASetMustRun) {
  // A library with PTX and one without: the set runs where both do.
  EXPECT_EQ(expr({{.sass = {cc("80")}, .ptx = {cc("80")}}, {.sass = {cc("80"), cc("90")}, .ptx = {}}}),
            "arch>=8.0,arch<10.0");
  EXPECT_EQ(expr({{.sass = {cc("80")}, .ptx = {}}, {.sass = {cc("90")}, .ptx = {}}}), "");
  EXPECT_EQ(expr({}), "");
}

// Where a device runs a binary only by JIT, the PTX the driver picks (the
// newest that runs there) can need a newer driver than the rest: the
// interval says so, and splits where the need changes.
TEST(RequireArch, JitOnlyDevicesCarryTheDriverTheirPtxNeeds) {
  const util::Version v128(12, 8), v130(13, 0);
  // sm_80 SASS, compute_80 PTX of 12.8: Ampere and Ada natively, every
  // later device by JIT with a 12.8 driver.
  EXPECT_EQ(expr({{.sass = {cc("80")}, .ptx = {cc("80")}, .ptx_cuda = {v128}}}),
            "arch>=8.0,arch<9.0 arch>=9.0,cuda>=12.8");
  // Two PTX targets: 9.x JITs compute_90 (no need), 10.0 on compute_100.
  EXPECT_EQ(expr({{.sass = {}, .ptx = {cc("90"), cc("100")}, .ptx_cuda = {std::nullopt, v130}}}),
            "arch>=9.0,arch<10.0 arch>=10.0,cuda>=13.0");
  // Across binaries the most needed wins; SASS of one does not excuse the other's JIT.
  EXPECT_EQ(expr({{.sass = {cc("90")}, .ptx = {}}, {.sass = {}, .ptx = {cc("90")}, .ptx_cuda = {v128}}}),
            "arch>=9.0,arch<10.0,cuda>=12.8");
  // Without ptx_cuda nothing changes.
  EXPECT_EQ(expr({{.sass = {cc("80")}, .ptx = {cc("80")}}}), "arch>=8.0");
}

TEST(RequireArch, IntervalsWriteAsTheToolkitReadsThem) {
  const std::vector<CcInterval> one = {{cc("8.6"), cc("8.7")}};
  EXPECT_EQ(require_arch(one), "arch=8.6");
  const std::vector<CcInterval> nine = {{cc("8.9"), cc("9.0")}};
  EXPECT_EQ(require_arch(nine), "arch=8.9");
  const std::vector<CcInterval> open = {{cc("12.0"), std::nullopt}};
  EXPECT_EQ(require_arch(open), "arch>=12.0");
}

}  // namespace
}  // namespace orc::arch
