// main() of the suites that are one ctest case each (a daemon or fixture set
// up once per binary): GoogleTest's own main, except that a run in which
// every case skipped exits with k_skip_exit_code, which their ctest entry
// declares as SKIP_RETURN_CODE, so ctest says Skipped instead of Passed. The
// reasons are printed last as "skipped: ..." lines, the first line of each
// distinct GTEST_SKIP message with the number of cases it skipped;
// scripts/ctest-skips.py reads them from ctest's JUnit file. A run in which
// only some cases skipped passes (or fails) as before and prints the same
// lines, so the summary can name partial skips too.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

namespace {

// The code the suites' CMake entries name in SKIP_RETURN_CODE.
constexpr int k_skip_exit_code = 77;

// Collects the message of every skipped case, by its first line.
class SkipReasons final : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.skipped()) return;
    std::string reason = result.message();
    if (const auto eol = reason.find('\n'); eol != std::string::npos) reason.resize(eol);
    if (reason.empty()) reason = "(GTEST_SKIP without a message)";
    ++m_counts[reason];
  }
  const std::map<std::string, int>& counts() const { return m_counts; }

 private:
  std::map<std::string, int> m_counts;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto* reasons = new SkipReasons;  // owned by GoogleTest's listener list
  ::testing::UnitTest::GetInstance()->listeners().Append(reasons);
  const int result = RUN_ALL_TESTS();

  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  const int ran = unit.test_to_run_count();
  const int skipped = unit.skipped_test_count();
  if (skipped == 0) return result;
  const bool all = skipped == ran && unit.failed_test_count() == 0 && !unit.ad_hoc_test_result().Failed();
  std::fflush(stdout);
  for (const auto& [reason, count] : reasons->counts())
    std::printf("skipped: %d of %d cases%s: %s\n", count, ran, all ? " (the whole suite)" : "", reason.c_str());
  std::fflush(stdout);
  return all && result == 0 ? k_skip_exit_code : result;
}
