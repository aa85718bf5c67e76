// The values `orchestrate stamp` writes: NVIDIA_REQUIRE_ARCH from mixed
// SASS and PTX sets, NVIDIA_REQUIRE_CUDA from the runtimes linked, and the
// config edit that keeps an image's own constraint.
#include "orchestrator/app/stamp/stamp.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace orc::app {
namespace {

using arch::ComputeCapability;
using arch::Variant;

inspect::FileReport lib(std::string path, std::set<ComputeCapability> sass, std::set<ComputeCapability> ptx = {}) {
  inspect::FileReport r;
  r.path = std::move(path);
  r.format = "elf";
  r.sass = std::move(sass);
  r.ptx = std::move(ptx);
  r.entries = r.sass.size() + r.ptx.size();
  return r;
}

const ComputeCapability sm80{8, 0}, sm86{8, 6}, sm90{9, 0}, sm100{10, 0}, sm120{12, 0};

TEST(StampValues, SassAloneBoundsEachMajorFromItsMinorUp) {
  EXPECT_EQ(stamp_values({lib("/a.so", {sm80})}, false).require_arch, "arch>=8.0,arch<9.0");
  EXPECT_EQ(stamp_values({lib("/a.so", {sm86})}, false).require_arch, "arch>=8.6,arch<9.0");
  EXPECT_EQ(stamp_values({lib("/a.so", {sm80, sm90})}, false).require_arch, "arch>=8.0,arch<10.0");
  EXPECT_EQ(stamp_values({lib("/a.so", {sm80, sm120})}, false).require_arch, "arch>=8.0,arch<9.0 arch>=12.0,arch<13.0");
}

TEST(StampValues, PtxOpensEveryLaterGpuUnlessNativeOnly) {
  const auto files = std::vector{lib("/a.so", {sm80}, {sm80})};
  EXPECT_EQ(stamp_values(files, false).require_arch, "arch>=8.0");
  EXPECT_EQ(stamp_values(files, true).require_arch, "arch>=8.0,arch<9.0");
}

TEST(StampValues, EveryLibraryMustRunSoTheSetsIntersect) {
  // A: native on 8.x and 9.x; B: native on 8.x, JIT from 9.0 up.
  const std::vector files{lib("/a.so", {sm80, sm90}), lib("/b.so", {sm80}, {sm90})};
  EXPECT_EQ(stamp_values(files, false).require_arch, "arch>=8.0,arch<10.0");
  // A third library for Blackwell only leaves nothing in common.
  auto more = files;
  more.push_back(lib("/c.so", {sm100}));
  EXPECT_EQ(stamp_values(more, false).require_arch, "");
  EXPECT_TRUE(stamp_values(more, false).runs_nowhere);
  EXPECT_FALSE(stamp_values(files, false).runs_nowhere);
}

TEST(StampValues, ArchSpecificSassRunsOnItsOwnCcOnly) {
  EXPECT_EQ(stamp_values({lib("/a.so", {sm90.with(Variant::arch_specific)})}, false).require_arch, "arch=9.0");
  EXPECT_EQ(stamp_values({lib("/a.so", {sm90.with(Variant::arch_specific)}, {sm90})}, false).require_arch, "arch>=9.0");
}

// A library that registers no kernel and builds its own at run time is not
// bounded by what it embeds; one that registers kernels is bounded by them
// whatever it builds besides, as its verdicts are.
TEST(StampValues, OnlyLibrariesWithoutRegisteredKernelsGoUnbounded) {
  auto builder = lib("/libcufft.so.12", {});
  builder.entries = 3;  // LTO entries only: nothing registered to launch
  builder.runtime_code.builders = {"nvJitLink (imports nvJitLinkCreate)"};
  auto v = stamp_values({lib("/a.so", {sm80}, {sm80}), builder}, false);
  EXPECT_EQ(v.require_arch, "arch>=8.0");
  EXPECT_EQ(v.unbounded, std::vector<std::string>{"/libcufft.so.12"});

  auto registered = lib("/libnvrtc-user.so", {sm120});
  registered.runtime_code.builders = {"NVRTC (names libnvrtc.so)"};
  v = stamp_values({lib("/a.so", {sm80}, {sm80}), registered}, false);
  EXPECT_EQ(v.require_arch, "arch>=12.0,arch<13.0");
  EXPECT_TRUE(v.unbounded.empty());
}

TEST(StampValues, ImagesALibraryLoadsItselfWidenItsRegisteredCode) {
  auto loads = lib("/libcublasLt.so", {sm80});
  loads.runtime_code.containers = 2;
  loads.runtime_code.sass = {sm90};
  EXPECT_EQ(stamp_values({loads}, false).require_arch, "arch>=8.0,arch<10.0");
}

TEST(StampValues, AModuleWithoutKernelsBoundsNothing) {
  auto f = lib("/b.so", {sm80, sm100});
  inspect::Module kernels;
  kernels.sass = {sm80};
  kernels.kernels = inspect::Kernels::yes;
  inspect::Module link_only;  // a device-link module: no kernel of its own
  link_only.sass = {sm100};
  link_only.kernels = inspect::Kernels::no;
  f.modules = {kernels, link_only};
  EXPECT_EQ(stamp_values({f}, false).require_arch, "arch>=8.0,arch<9.0");
}

TEST(StampValues, AllowsReadsTheIntervals) {
  const auto v = stamp_values({lib("/a.so", {sm80, sm120}, {sm120})}, false);
  ASSERT_EQ(v.require_arch, "arch>=8.0,arch<9.0 arch>=12.0");
  EXPECT_TRUE(arch::allows(v.intervals, sm80));
  EXPECT_TRUE(arch::allows(v.intervals, sm86));
  EXPECT_FALSE(arch::allows(v.intervals, sm90));
  EXPECT_FALSE(arch::allows(v.intervals, sm100));
  EXPECT_TRUE(arch::allows(v.intervals, sm120));
  EXPECT_TRUE(arch::allows(v.intervals, ComputeCapability{13, 0}));
}

// PTX from a newer toolkit than the runtime's major: the GPUs that JIT it
// need a driver that compiles its ISA (8.7: CUDA 12.8), the others do not.
TEST(StampValues, JitOfANewerPtxIsaAsksItsDriverOfTheGpusThatNeedIt) {
  auto f = lib("/a.so", {sm80}, {sm80});
  f.runtime = inspect::FileReport::Runtime{12, "libcudart.so.12"};
  inspect::Module m;
  m.sass = {sm80};
  m.ptx = {inspect::PtxImage{.arch = sm80, .isa = util::Version(8, 7)}};
  m.kernels = inspect::Kernels::yes;
  f.modules = {m};
  auto v = stamp_values({f}, false);
  EXPECT_EQ(v.require_cuda, "cuda>=12.0");
  EXPECT_EQ(v.require_arch, "arch>=8.0,arch<9.0 arch>=9.0,cuda>=12.8");
  EXPECT_EQ(stamp_values({f}, true).require_arch, "arch>=8.0,arch<9.0");
  // The runtime's own major already asks as much: no extra term.
  f.runtime = inspect::FileReport::Runtime{13, "libcudart.so.13"};
  f.modules[0].ptx[0].isa = util::Version(9, 0);
  EXPECT_EQ(stamp_values({f}, false).require_arch, "arch>=8.0");
}

TEST(StampValues, TheNewestRuntimeMajorSetsTheCudaRequirement) {
  auto a = lib("/a.so", {sm80});
  a.runtime = inspect::FileReport::Runtime{12, "libcudart.so.12"};
  auto b = lib("/b.so", {sm80});
  b.runtime = inspect::FileReport::Runtime{13, "static, device-linked by CUDA 13.0"};
  EXPECT_EQ(stamp_values({a, b}, false).require_cuda, "cuda>=13.0");
  EXPECT_EQ(stamp_values({lib("/c.so", {sm80})}, false).require_cuda, "");
}

TEST(StampConfig, OursAreSetTheImagesOwnCudaConstraintIsKeptAndStillChecked) {
  const std::string config = R"({"architecture":"amd64","config":{"Env":["PATH=/bin",
      "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471","NVIDIA_REQUIRE_ARCH=arch>=5.0"],
      "Labels":{"a":"b"}},"rootfs":{"type":"layers","diff_ids":["sha256:00"]}})";
  const StampValues v{.require_cuda = "cuda>=12.0", .require_arch = "arch>=8.0,arch<9.0 arch>=9.0", .unbounded = {}};
  auto out = stamp_config(config, v, "tier-new", "sha256:abc");
  ASSERT_TRUE(out) << out.error();
  EXPECT_TRUE(out->removed.empty());
  const auto doc = nlohmann::json::parse(out->json);
  const auto env = doc["config"]["Env"].get<std::vector<std::string>>();
  EXPECT_EQ(env, (std::vector<std::string>{
                     "PATH=/bin", "NVIDIA_REQUIRE_CUDA_IMAGE=cuda>=12.4 brand=tesla,driver>=470,driver<471",
                     "NVIDIA_REQUIRE_CUDA=cuda>=12.0", "NVIDIA_REQUIRE_ARCH=arch>=8.0,arch<9.0 arch>=9.0"}));
  EXPECT_EQ(doc["config"]["Labels"]["a"], "b");
  EXPECT_EQ(doc["config"]["Labels"]["org.orchestrate.stamp.tier"], "tier-new");
  EXPECT_EQ(doc["rootfs"]["diff_ids"][0], "sha256:00");  // the layers stay

  // Stamping a stamped image again replaces ours, never piles up, and
  // keeps the image's own constraint the first stamp set aside.
  auto again = stamp_config(out->json, v, "tier-new", "sha256:def");
  ASSERT_TRUE(again);
  EXPECT_EQ(nlohmann::json::parse(again->json)["config"]["Env"].get<std::vector<std::string>>(), env);

  EXPECT_FALSE(stamp_config("not json", v, "t", "s"));
  EXPECT_FALSE(stamp_config("[1]", v, "t", "s"));
}

}  // namespace
}  // namespace orc::app
