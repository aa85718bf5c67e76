#include "orchestrator/compat/cudnn.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/compat/toolkits.hpp"

namespace orc::compat {
namespace {

using arch::ComputeCapability;
using util::Version;

Version v(std::string_view text) { return Version::parse(text).value(); }

const CudnnRelease& dnn(std::string_view version) {
  const CudnnRelease* r = find_cudnn(v(version));
  if (!r) throw std::runtime_error("no cuDNN " + std::string(version));
  return *r;
}

// "11.0-11.8 12.0-12.2", the notation of the table.
std::string spans(const CudnnRelease& r) {
  std::string out;
  for (const CudaSpan& s : r.cuda) {
    if (!out.empty()) out += ' ';
    out += s.first.str();
    if (s.last != s.first) out += "-" + s.last.str();
  }
  return out;
}

TEST(Cudnn, OneRowPerMinorReleaseAscending) {
  std::vector<std::string> versions;
  for (const CudnnRelease& r : cudnn_table()) versions.push_back(r.version.str());
  std::vector<std::string> expected;
  for (int minor = 0; minor <= 6; ++minor) expected.push_back("7." + std::to_string(minor));
  for (int minor = 0; minor <= 9; ++minor) expected.push_back("8." + std::to_string(minor));
  for (int minor = 0; minor <= 28; ++minor) expected.push_back("9." + std::to_string(minor));
  EXPECT_EQ(versions, expected);
  const auto table = cudnn_table();
  for (std::size_t i = 1; i < table.size(); ++i) EXPECT_LT(table[i - 1].version, table[i].version);
}

TEST(Cudnn, FindDistinguishes9_1From9_10) {
  EXPECT_EQ(dnn("9.1").version, v("9.1"));
  EXPECT_EQ(dnn("9.10.2.21").version, v("9.10"));
  EXPECT_EQ(find_cudnn(v("6.0")), nullptr);
  EXPECT_EQ(find_cudnn(v("9.29")), nullptr);
}

TEST(Cudnn, MinimumComputeCapabilityByEra) {
  EXPECT_EQ(dnn("7.6").min_cc, ComputeCapability(3, 0));
  EXPECT_EQ(dnn("8.4").min_cc, ComputeCapability(3, 0));
  EXPECT_EQ(dnn("8.5").min_cc, ComputeCapability(3, 5));
  EXPECT_EQ(dnn("8.9").min_cc, ComputeCapability(5, 0));
  EXPECT_EQ(dnn("9.10").min_cc, ComputeCapability(5, 0));
  EXPECT_EQ(dnn("9.11").min_cc, ComputeCapability(7, 5));
  EXPECT_EQ(dnn("9.21").min_cc, ComputeCapability(7, 5));
}

TEST(Cudnn, Cudnn9_10IsTheLastWithCuda11) {
  EXPECT_TRUE(dnn("9.10").supports_cuda(v("11.8")));
  EXPECT_TRUE(dnn("9.10").supports_cuda(v("12.9")));
  EXPECT_FALSE(dnn("9.11").supports_cuda(v("11.8")));
  EXPECT_TRUE(dnn("9.11").supports_cuda(v("12.9")));
  EXPECT_FALSE(dnn("9.11").supports_cuda(v("13.0")));
}

TEST(Cudnn, Cudnn9_17MatchesItsSupportMatrix) {
  const CudnnRelease& r = dnn("9.17");
  EXPECT_EQ(spans(r), "12.0-12.9 13.0-13.1");
  EXPECT_TRUE(r.supports_cuda(v("13.1")));
  EXPECT_TRUE(r.supports_cuda(v("13.1.2")));
  EXPECT_TRUE(r.supports_cuda(v("12.0")));
  EXPECT_FALSE(r.supports_cuda(v("11.8")));
  EXPECT_FALSE(r.supports_cuda(v("13.2")));
  EXPECT_TRUE(r.unconfirmed.empty());
}

TEST(Cudnn, SpansFromTheReference) {
  EXPECT_EQ(spans(dnn("7.6")), "9.0 9.2 10.0-10.2");
  EXPECT_EQ(spans(dnn("8.0")), "10.1-10.2 11.0-11.1");
  EXPECT_EQ(spans(dnn("8.9")), "11.0-11.8 12.0-12.2");
  EXPECT_EQ(spans(dnn("9.0")), "11.0-11.8 12.0-12.3");
  EXPECT_EQ(spans(dnn("9.1")), "11.0-11.8 12.0-12.4");
  EXPECT_EQ(spans(dnn("9.5")), "11.0-11.8 12.0-12.6");
  EXPECT_FALSE(dnn("7.6").supports_cuda(v("9.1")));  // "Not Supported" in the 7.6 matrix
  EXPECT_FALSE(dnn("8.9").supports_cuda(v("12.3")));
  EXPECT_TRUE(dnn("9.12").supports_cuda(v("13.0")));
}

// Issue 13: 9.22 - 9.28 from NVIDIA's redistrib JSON (cuda12 and cuda13
// builds each); each CUDA 13 span ends at the newest 13.x released before
// the cuDNN release, marked, since the JSON names only the major. 9.21
// (2026-04-14) no longer claims 13.3 and 13.4, which shipped after it.
TEST(Cudnn, ReleasesUpTo9_27WithTheCuda13TheyCouldKnow) {
  EXPECT_EQ(spans(dnn("9.21")), "12.0-12.9 13.0-13.2");
  EXPECT_EQ(spans(dnn("9.22")), "12.0-12.9 13.0-13.2");
  EXPECT_EQ(spans(dnn("9.23")), "12.0-12.9 13.0-13.3");
  EXPECT_EQ(spans(dnn("9.24")), "12.0-12.9 13.0-13.3");
  EXPECT_EQ(spans(dnn("9.25")), "12.0-12.9 13.0-13.3");
  EXPECT_EQ(spans(dnn("9.26")), "12.0-12.9 13.0-13.4");
  EXPECT_EQ(spans(dnn("9.27")), "12.0-12.9 13.0-13.4");
  EXPECT_EQ(spans(dnn("9.28")), "12.0-12.9 13.0-13.5");  // redistrib_9.28.1.json, 2026-11-06
  EXPECT_FALSE(dnn("9.21").supports_cuda(v("13.3")));
  EXPECT_FALSE(dnn("9.27").supports_cuda(v("13.5")));
  for (auto version : {"9.22", "9.23", "9.24", "9.25", "9.26", "9.27", "9.28"}) {
    EXPECT_TRUE(dnn(version).is_unconfirmed("cuda")) << version;
    EXPECT_TRUE(dnn(version).is_unconfirmed("min_cc")) << version;
    EXPECT_TRUE(dnn(version).supports_cuda(v("12.9"))) << version;
  }
}

TEST(Cudnn, UnconfirmedMarksFollowTheReference) {
  EXPECT_TRUE(dnn("7.0").is_unconfirmed("cuda"));
  EXPECT_TRUE(dnn("7.2").is_unconfirmed("cuda"));
  EXPECT_TRUE(dnn("8.5").is_unconfirmed("cuda"));
  for (auto version : {"8.6", "8.7", "8.8"}) {
    EXPECT_TRUE(dnn(version).is_unconfirmed("min_cc")) << version;
    EXPECT_EQ(dnn(version).min_cc, ComputeCapability(3, 5)) << version;
  }
  // CUDA 13 upper ends the reference does not give.
  EXPECT_TRUE(dnn("9.12").is_unconfirmed("cuda"));
  EXPECT_TRUE(dnn("9.21").is_unconfirmed("cuda"));
  EXPECT_FALSE(dnn("8.9").is_unconfirmed("cuda"));
  EXPECT_FALSE(dnn("9.11").is_unconfirmed("min_cc"));
}

// Every CUDA version a cuDNN row names must be a released row of the toolkit
// table, or the resolver could pair cuDNN with a toolkit it does not know.
TEST(Cudnn, SpanEndsAreReleasedToolkits) {
  for (const CudnnRelease& r : cudnn_table()) {
    ASSERT_FALSE(r.cuda.empty()) << r.version.str();
    for (const CudaSpan& s : r.cuda) {
      for (const Version& end : {s.first, s.last}) {
        const Toolkit* t = find_toolkit(end);
        EXPECT_TRUE(t && t->released) << r.version.str() << " names CUDA " << end.str();
      }
    }
  }
}

}  // namespace
}  // namespace orc::compat
