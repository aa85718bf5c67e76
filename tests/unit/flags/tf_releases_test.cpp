// TensorFlow's tested configurations and the hermetic rules' versions, row
// by row against their sources (docs/sources/issue13-framework-facts.md 2a, 2b).
#include "orchestrator/flags/tf_releases.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace orc::flags {
namespace {

util::Version v(std::string_view text) { return *util::Version::parse(text); }

TEST(TfReleases, EveryRowOfTheTestedConfigurations) {
  std::vector<std::string> rows;
  for (const auto& r : tf_releases()) rows.push_back(r.version.str() + " " + r.cuda.str() + " " + r.cudnn.str());
  EXPECT_EQ(rows, (std::vector<std::string>{"2.10 11.2 8.1", "2.11 11.2 8.1", "2.12 11.8 8.6", "2.13 11.8 8.6",
                                            "2.14 11.8 8.7", "2.15 12.2 8.9", "2.16 12.3 8.9", "2.17 12.3 8.9",
                                            "2.18 12.5 9.3", "2.19 12.5 9.3", "2.20 12.5 9.3", "2.21 12.5 9.3"}));
}

TEST(TfReleases, HermeticVersionsAreTheNewestKeyOfTheMinor) {
  EXPECT_EQ(hermetic_cuda_version(v("12.5"))->str(), "12.5.1");
  EXPECT_EQ(hermetic_cuda_version(v("12.6"))->str(), "12.6.3");
  EXPECT_EQ(hermetic_cuda_version(v("13.0"))->str(), "13.0.2");
  EXPECT_EQ(hermetic_cuda_version(v("11.8"))->str(), "11.8");  // the dict keys 11.8 short
  EXPECT_FALSE(hermetic_cuda_version(v("12.7")));
  EXPECT_FALSE(hermetic_cuda_version(v("13.1")));
  EXPECT_EQ(hermetic_cudnn_version(v("9.3"))->str(), "9.3.0");
  EXPECT_EQ(hermetic_cudnn_version(v("8.9"))->str(), "8.9.7.29");
  EXPECT_EQ(hermetic_cudnn_version(v("9.10"))->str(), "9.10.2");
  EXPECT_FALSE(hermetic_cudnn_version(v("9.17")));
}

}  // namespace
}  // namespace orc::flags
