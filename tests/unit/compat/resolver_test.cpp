#include "orchestrator/compat/resolver.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace orc::compat {
namespace {

using arch::ComputeCapability;

util::Version v(std::string_view s) { return util::Version::parse(s).value(); }

RangeConstraint cuda_range(std::string_view text) {
  return RangeConstraint{util::VersionRange::parse(text).value(), "recipe requires cuda"};
}

ResolveRequest request(std::vector<TargetGpu> gpus) {
  ResolveRequest r;
  r.gpus = std::move(gpus);
  r.candidates = {v("11.8"), v("12.4"), v("12.8"), v("12.9"), v("13.0")};
  return r;
}

const TargetGpu k80{"Tesla K80", {3, 7}};
const TargetGpu t4{"Tesla T4", {7, 5}};
const TargetGpu v100{"Tesla V100", {7, 0}};
const TargetGpu a100{"A100", {8, 0}};
const TargetGpu rtx4090{"GeForce RTX 4090", {8, 9}};
const TargetGpu h100{"H100", {9, 0}};
const TargetGpu b200{"B200", {10, 0}};
const TargetGpu rtx5090{"GeForce RTX 5090", {12, 0}};
const TargetGpu gb10{"GB10", {12, 1}};

bool any_contains(const std::vector<std::string>& lines, std::string_view needle) {
  return std::ranges::any_of(lines, [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

std::string dump(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "  " + l + "\n";
  return out;
}

TEST(Resolver, NewestToolkitThatCompilesEveryCc) {
  const auto outcome = resolve(request({a100, rtx4090, h100}));
  ASSERT_TRUE(std::holds_alternative<Resolution>(outcome));
  const auto& r = std::get<Resolution>(outcome);
  EXPECT_EQ(r.toolkit->version.str(), "13.0");
  EXPECT_EQ(r.archs.sass_names(), (std::vector<std::string>{"sm_80", "sm_89", "sm_90"}));
  EXPECT_EQ(r.archs.ptx_names(), std::vector<std::string>{"compute_90"});
  EXPECT_EQ(r.cudnn, nullptr);  // not asked for
}

TEST(Resolver, VoltaForcesCuda12Because13DroppedIt) {
  const auto outcome = resolve(request({v100, t4, a100}));
  ASSERT_TRUE(std::holds_alternative<Resolution>(outcome));
  const auto& r = std::get<Resolution>(outcome);
  EXPECT_EQ(r.toolkit->version.str(), "12.9");
  EXPECT_TRUE(any_contains(r.reasons, "CUDA 13.0 skipped: no sm_70 for Tesla V100 (7.0)")) << dump(r.reasons);
  EXPECT_TRUE(any_contains(r.warnings, "sm_70 is deprecated")) << dump(r.warnings);
}

TEST(Resolver, KeplerAgainstRecipeRangeNamesGpuCcAndConstraint) {
  ResolveRequest req = request({k80, a100});
  req.cuda = cuda_range(">=12.0");
  const auto outcome = resolve(req);
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(outcome));
  const auto& u = std::get<Unsatisfiable>(outcome);
  EXPECT_TRUE(any_contains(u.reasons, "Tesla K80 (3.7) needs CUDA <= 11.8, recipe requires cuda >=12.0"))
      << dump(u.reasons);
}

TEST(Resolver, OldAndNewGenerationsSplit) {
  // K80 needs <= 11.8, B200 needs >= 12.8: no toolkit builds both.
  const auto outcome = resolve(request({k80, a100, b200}));
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(outcome));
  const auto& u = std::get<Unsatisfiable>(outcome);
  EXPECT_TRUE(
      any_contains(u.reasons, "Tesla K80 (3.7) needs CUDA <= 11.8, B200 (10.0) needs CUDA >= 12.8: no single toolkit"))
      << dump(u.reasons);
  ASSERT_EQ(u.split.size(), 2u);
  EXPECT_EQ(u.split[0], (std::vector<std::string>{"Tesla K80", "A100"}));
  EXPECT_EQ(u.split[1], std::vector<std::string>{"B200"});
  EXPECT_NE(u.split_hint.find("Tesla K80, A100 with CUDA 11.8; B200 with CUDA 13.0"), std::string::npos)
      << u.split_hint;
}

TEST(Resolver, GpuNoAvailableToolkitKnows) {
  ResolveRequest req = request({gb10});
  req.candidates = {v("11.8"), v("12.4"), v("12.8")};
  const auto outcome = resolve(req);
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(outcome));
  EXPECT_TRUE(any_contains(std::get<Unsatisfiable>(outcome).reasons, "GB10 (12.1) needs CUDA 12.9 to"))
      << dump(std::get<Unsatisfiable>(outcome).reasons);
}

TEST(Resolver, PtxPolicies) {
  ResolveRequest req = request({b200, rtx5090, gb10});
  req.ptx = arch::PtxPolicy::none;
  auto r = std::get<Resolution>(resolve(req));
  EXPECT_TRUE(r.archs.ptx.empty());
  EXPECT_TRUE(any_contains(r.warnings, "no kernel image is available"));
  req.ptx = arch::PtxPolicy::all;
  r = std::get<Resolution>(resolve(req));
  EXPECT_EQ(r.archs.ptx_names(), (std::vector<std::string>{"compute_100", "compute_120", "compute_121"}));
  req.ptx = arch::PtxPolicy::highest;
  r = std::get<Resolution>(resolve(req));
  EXPECT_EQ(r.archs.ptx_names(), std::vector<std::string>{"compute_121"});
  EXPECT_EQ(r.toolkit->version.str(), "13.0");
}

TEST(Resolver, CudnnChosenForTheToolkitAndOldestCc) {
  ResolveRequest req = request({t4, a100});
  req.needs_cudnn = true;
  auto r = std::get<Resolution>(resolve(req));
  ASSERT_NE(r.cudnn, nullptr);
  EXPECT_TRUE(r.cudnn->supports_cuda(r.toolkit->version));
  EXPECT_FALSE(r.cudnn->min_cc > ComputeCapability(7, 5));

  // Pascal is older than cuDNN 9.11's minimum (7.5), so 9.10 is the newest.
  req.gpus = {{"Tesla P100", {6, 0}}};
  r = std::get<Resolution>(resolve(req));
  ASSERT_NE(r.cudnn, nullptr);
  EXPECT_EQ(r.cudnn->version.str(), "9.10");

  req.cudnn = RangeConstraint{util::VersionRange::parse(">=9.11").value(), "recipe requires cudnn"};
  const auto outcome = resolve(req);
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(outcome));
  EXPECT_TRUE(
      any_contains(std::get<Unsatisfiable>(outcome).reasons, "no cuDNN release in recipe requires cudnn >=9.11"))
      << dump(std::get<Unsatisfiable>(outcome).reasons);
}

// Issue 13: 13.5's minimum driver is not sourced. A tier with a driver never
// gets 13.5 as fully supported: a toolkit whose minimum is known and met wins,
// and when only 13.4/13.5 compile for the GPU (Rubin, 10.7) below 13.4's R615,
// the plan runs under minor-version compatibility and says what that costs.
TEST(Resolver, AnUnknownMinimumDriverIsNeverTakenAsMet) {
  ResolveRequest req = request({b200});
  req.candidates = {v("13.4"), v("13.5")};
  req.driver = v("615.0");
  auto r = std::get<Resolution>(resolve(req));
  EXPECT_EQ(r.toolkit->version.str(), "13.4");
  EXPECT_TRUE(any_contains(r.reasons, "CUDA 13.5 skipped: its minimum driver is not known, the tier's driver is 615.0"))
      << dump(r.reasons);
  EXPECT_FALSE(any_contains(r.warnings, "minor-version")) << dump(r.warnings);

  req.gpus = {TargetGpu{"Rubin", {10, 7}}};
  req.driver = v("595.45.04");
  r = std::get<Resolution>(resolve(req));
  EXPECT_EQ(r.toolkit->version.str(), "13.5");
  EXPECT_TRUE(any_contains(r.warnings,
                           "CUDA 13.5's minimum driver is not known (not yet sourced): on the tier's driver "
                           "595.45.04 it may run only under minor-version compatibility, and then PTX built by "
                           "this toolkit cannot be JIT-compiled there (error 222)"))
      << dump(r.warnings);

  // Below the 13.x floor (580.65.06) neither runs.
  req.driver = v("575.51.03");
  const auto outcome = resolve(req);
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(outcome));
  EXPECT_TRUE(any_contains(std::get<Unsatisfiable>(outcome).reasons,
                           "CUDA 13.5: needs driver >= 580.65.06 (minimum not known; the 13.x floor), the tier's "
                           "driver is 575.51.03"))
      << dump(std::get<Unsatisfiable>(outcome).reasons);
}

TEST(Resolver, DriverPrefersAFullySupportedToolkit) {
  ResolveRequest req = request({a100, h100});
  req.driver = v("550.54.15");
  auto r = std::get<Resolution>(resolve(req));
  EXPECT_EQ(r.toolkit->version.str(), "12.4");
  EXPECT_TRUE(any_contains(r.reasons, "CUDA 13.0 skipped: needs driver >= 580.65.06, the tier's driver is 550.54.15"))
      << dump(r.reasons);

  // Only 12.8 allowed: runs under minor-version compatibility, with a warning.
  req.candidates = {v("12.8")};
  r = std::get<Resolution>(resolve(req));
  EXPECT_EQ(r.toolkit->version.str(), "12.8");
  // What minor-version compatibility costs, pinned (cuda-compat.md 2.3: SASS
  // of a newer 12.x runs on R525+, its PTX does not JIT there).
  EXPECT_NE(std::ranges::find(r.warnings,
                              "the tier's driver 550.54.15 is older than CUDA 12.8's 570.26: it runs only "
                              "under minor-version compatibility, and PTX built by this toolkit cannot be "
                              "JIT-compiled there (error 222)"),
            r.warnings.end())
      << dump(r.warnings);

  // Below the CUDA 12 floor (525.60) nothing of 12.x runs.
  req.driver = v("470.82");
  const auto outcome = resolve(req);
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(outcome));
  EXPECT_TRUE(any_contains(std::get<Unsatisfiable>(outcome).reasons, "needs driver >= 570.26"))
      << dump(std::get<Unsatisfiable>(outcome).reasons);
}

TEST(Resolver, HostCompilerRange) {
  ResolveRequest req = request({t4});
  req.gcc = RangeConstraint{util::VersionRange::parse(">=15").value(), "recipe requires gcc"};
  auto r = std::get<Resolution>(resolve(req));
  EXPECT_EQ(r.toolkit->version.str(), "13.0");
  req.candidates = {v("11.8"), v("12.4")};
  const auto outcome = resolve(req);
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(outcome));
  EXPECT_TRUE(any_contains(std::get<Unsatisfiable>(outcome).reasons, "takes GCC <= 13, recipe requires gcc >=15"))
      << dump(std::get<Unsatisfiable>(outcome).reasons);
}

TEST(Resolver, ImpossibleRangeAndEmptyTier) {
  ResolveRequest req = request({t4});
  req.cuda = cuda_range(">=13,<12");
  auto outcome = resolve(req);
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(outcome));
  EXPECT_TRUE(any_contains(std::get<Unsatisfiable>(outcome).reasons, "impossible range"));
  outcome = resolve(request({}));
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(outcome));
}

TEST(Resolver, EveryReleasedToolkitWhenNoCandidatesListed) {
  ResolveRequest req;
  req.gpus = {h100};
  const auto r = std::get<Resolution>(resolve(req));
  EXPECT_EQ(r.toolkit->version.str(), toolkit_table().back().version.str());
}

// What a probe taught one table is an input of the request that names it,
// never of another request in the same process.
TEST(Resolver, ALearnedReleaseIsChosenOnlyFromTheTableThatLearnedIt) {
  const TargetGpu future{"Future", {15, 0}};
  ResolveRequest req;
  req.gpus = {h100, future};
  ASSERT_TRUE(std::holds_alternative<Unsatisfiable>(resolve(req))) << "no sourced toolkit compiles for CC 15.0";

  ToolkitTable learned = ToolkitTable::known();
  const util::Version next(std::vector<int>{learned.rows().back().version.major() + 1, 2});
  ASSERT_NE(learned.learn(next, {{9, 0}, {15, 0}}, "probe"), nullptr);
  req.table = &learned;
  const auto chosen = resolve(req);
  ASSERT_TRUE(std::holds_alternative<Resolution>(chosen));
  EXPECT_EQ(std::get<Resolution>(chosen).toolkit, learned.find(next));
  EXPECT_EQ(std::get<Resolution>(chosen).archs.sass.count({15, 0}), 1u);

  req.table = nullptr;
  EXPECT_TRUE(std::holds_alternative<Unsatisfiable>(resolve(req))) << "the sourced table learned nothing";
}

}  // namespace
}  // namespace orc::compat
