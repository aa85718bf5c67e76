// Each PyTorch release's TORCH_CUDA_ARCH_LIST, row by row against the
// release's own cpp_extension.py `supported_arches` (issue 13).
#include "orchestrator/flags/torch_releases.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace orc::flags {
namespace {

using arch::ComputeCapability;

const TorchRelease& release(const char* version) {
  const TorchRelease* r = find_torch_release(*util::Version::parse(version));
  if (!r) throw std::runtime_error(std::string("no row for PyTorch ") + version);
  return *r;
}

bool accepts(const char* version, const char* cc) {
  const std::vector<ComputeCapability> one{*ComputeCapability::parse(cc)};
  return torch_rejects(release(version), one).empty();
}

TEST(TorchReleases, EachReleaseAcceptsWhatItsExtensionBuilderLists) {
  // 1.13 stops at 8.6: Ada and Hopper are "Unknown CUDA arch".
  EXPECT_TRUE(accepts("1.13", "8.6"));
  EXPECT_FALSE(accepts("1.13", "8.9"));
  EXPECT_FALSE(accepts("1.13", "9.0"));
  // 2.0 adds 8.9 and 9.0; 2.1 adds 8.7; 2.2 adds 9.0a.
  EXPECT_TRUE(accepts("2.0", "9.0"));
  EXPECT_FALSE(accepts("2.0", "8.7"));
  EXPECT_TRUE(accepts("2.1", "8.7"));
  EXPECT_FALSE(accepts("2.1", "9.0a"));
  EXPECT_TRUE(accepts("2.2", "9.0a"));
  // 2.4 (the example) rejects 10.0 and 12.0; 2.6 adds 10.0 only.
  EXPECT_FALSE(accepts("2.4", "10.0"));
  EXPECT_FALSE(accepts("2.4", "12.0"));
  EXPECT_TRUE(accepts("2.6", "10.0"));
  for (const char* cc : {"10.0a", "10.1", "12.0"}) EXPECT_FALSE(accepts("2.6", cc)) << cc;
  // 2.7 adds 10.0a, 10.1, 12.0 (and their 'a'); 2.11 renames Thor to 11.0,
  // adds 10.3 and 12.1 and drops 10.1.
  for (const char* cc : {"10.0a", "10.1", "10.1a", "12.0", "12.0a"}) EXPECT_TRUE(accepts("2.7", cc)) << cc;
  EXPECT_FALSE(accepts("2.7", "12.1"));
  for (const char* cc : {"11.0", "11.0a", "10.3", "10.3a", "12.1", "12.1a"}) EXPECT_TRUE(accepts("2.11", cc)) << cc;
  EXPECT_FALSE(accepts("2.11", "10.1"));
  // No release takes the 'f' suffix.
  for (const auto& r : torch_releases())
    EXPECT_TRUE(!torch_rejects(r, std::vector<ComputeCapability>{*ComputeCapability::parse("12.0f")}).empty())
        << r.version.str();
}

TEST(TorchReleases, ReleasesNoSourceGaveHaveNoRow) {
  for (const char* version : {"2.8", "2.9", "2.10", "2.12", "1.12"})
    EXPECT_EQ(find_torch_release(*util::Version::parse(version)), nullptr) << version;
  EXPECT_TRUE(release("2.5").unconfirmed);
  EXPECT_FALSE(release("2.4").unconfirmed);
  // A patch release finds its minor's row.
  EXPECT_EQ(&release("2.4.1"), &release("2.4"));
  for (std::size_t i = 1; i < torch_releases().size(); ++i)
    EXPECT_LT(torch_releases()[i - 1].version, torch_releases()[i].version);
}

// Row by row against RELEASE.md's Release Compatibility Matrix (stable and
// experimental CUDA together; docs/sources/issue13-framework-facts.md 1a).
TEST(TorchCudaBuilds, EveryRowOfTheReleaseMatrix) {
  std::vector<std::string> rows;
  for (const auto& r : torch_cuda_builds()) {
    std::string line = r.version.str() + ":";
    for (const auto& v : r.cuda) line += " " + v.str();
    rows.push_back(line);
    for (std::size_t i = 1; i < r.cuda.size(); ++i) EXPECT_LT(r.cuda[i - 1], r.cuda[i]) << r.version.str();
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"1.13: 11.6 11.7", "2.0: 11.7 11.8", "2.1: 11.8 12.1", "2.2: 11.8 12.1",
                                            "2.3: 11.8 12.1", "2.4: 11.8 12.1 12.4", "2.5: 11.8 12.1 12.4",
                                            "2.6: 11.8 12.4 12.6", "2.7: 11.8 12.6 12.8", "2.8: 12.6 12.8 12.9",
                                            "2.9: 12.6 12.8 13.0", "2.10: 12.6 12.8 13.0", "2.11: 12.6 12.8 13.0",
                                            "2.12: 12.6 13.0 13.2", "2.13: 12.6 13.0 13.2", "2.14: 12.6 13.0 13.2"}));
}

}  // namespace
}  // namespace orc::flags
