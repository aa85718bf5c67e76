// Verdicts on the -rdc fixtures that make-fixtures.sh builds with each nvcc
// (rdcdl, librdcdl.so: relocatable code for several SASS archs, device-linked
// for one): .nv_fatbin's device-linked code decides where it has code, and
// where it has none the runtime links __nv_relfatbin's images at load time
// (what the H200 did, tests/gpu/verdicts-h200.txt); listings with -all show
// both (goldens in golden/<release>/).
#include <gtest/gtest.h>

#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/inspect/verdict.hpp"
#include "tests/inspect/fixtures.hpp"

namespace orc::inspect_test {
namespace {

using arch::ComputeCapability;

struct Case {
  std::string toolkit;
  ComputeCapability linked;                   // the device link's only arch
  std::set<ComputeCapability> relocatable;    // what __nv_relfatbin holds besides
};

class RdcVerdict : public ::testing::TestWithParam<Case> {};

TEST_P(RdcVerdict, RelocatableCodeDecidesWhereTheDeviceLinkedHasNothing) {
  const Case& c = GetParam();
  const FixtureSet& set = fixture_set(c.toolkit);
  if (set.dir.empty()) GTEST_SKIP() << set.missing << set.build_error;
  for (const char* name : {"rdcdl", "librdcdl.so"}) {
    SCOPED_TRACE(name);
    const auto reports = inspect::inspect_files({set.dir / name}, {.threads = 1, .modules = true});
    const inspect::FileReport& r = reports.at(0);
    std::set<ComputeCapability> listed = c.relocatable;
    listed.insert(c.linked);
    EXPECT_EQ(r.sass, listed);  // what cuobjdump -all lists
    EXPECT_EQ(inspect::loadable_code(r).sass, std::set<ComputeCapability>{c.linked});
    const inspect::FileVerdict own = inspect::judge_file(r, c.linked);
    EXPECT_EQ(own.verdict.outcome, inspect::Outcome::native);
    EXPECT_FALSE(own.relinked);
    for (const auto& cc : c.relocatable) {
      if (c.linked.sass_runs_on(cc)) continue;  // the linked cubin loads there too
      const inspect::FileVerdict v = inspect::judge_file(r, cc);
      EXPECT_EQ(v.verdict.outcome, inspect::Outcome::native) << cc.dotted() << ": " << v.verdict.detail;
      EXPECT_TRUE(v.relinked) << cc.dotted();
    }
    // A GPU of a major nothing was built for gets nothing either way.
    EXPECT_EQ(inspect::judge_file(r, {12, 0}).verdict.outcome, inspect::Outcome::none);
  }
}

INSTANTIATE_TEST_SUITE_P(Toolkits, RdcVerdict,
                         ::testing::Values(Case{"11.8", {6, 0}, {{7, 0}, {8, 0}}},
                                           Case{"13.0", {7, 5}, {{8, 0}, {9, 0}}}),
                         [](const auto& info) { return "cuda" + std::string(info.param.toolkit == "11.8" ? "118" : "130"); });

}  // namespace
}  // namespace orc::inspect_test
