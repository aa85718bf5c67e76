// Modules as the runtime loads them, on real nvcc 13.0 output: relocatable
// code never counts in a linked file, kernel modules decide, the device
// link's module does not, the static runtime is read from the device link.
// Skipped without nvcc 13.
#include <gtest/gtest.h>

#include <algorithm>

#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/inspect/verdict.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"
#include "tests/unit/inspect/nvcc_outputs.hpp"

namespace orc::inspect {
namespace {

using arch::ComputeCapability;

FileReport inspect_one(const std::filesystem::path& path) {
  auto reports = inspect_files({path}, {.threads = 1, .modules = true});
  return std::move(reports.at(0));
}

DriverFacts facts_for(const char* driver) {
  return {.driver = *util::Version::parse(driver),
          .max_ptx_isa = std::string_view(driver).starts_with("580") ? util::Version(9, 0) : util::Version(8, 4),
          .driver_for_isa = [](const util::Version&) { return util::Version::parse("580.65.06").value(); },
          .driver_for_runtime = [](int major) -> std::optional<util::Version> {
            if (major == 13) return util::Version::parse("580.65.06").value();
            return std::nullopt;
          }};
}

TEST(ModuleNvcc, RelocatableCodeDecidesOnlyWhenTheDeviceLinkedCodeHasNothing) {
  ORC_NVCC_OUTPUT(path, "rdc75.so");
  const FileReport r = inspect_one(path);
  // Listed as cuobjdump -all lists them: every SASS of both sections.
  EXPECT_EQ(r.sass, (std::set<ComputeCapability>{{7, 5}, {8, 0}, {9, 0}}));
  const auto loadable = std::ranges::count_if(r.modules, &Module::loadable);
  ASSERT_EQ(loadable, 1);
  EXPECT_EQ(loadable_code(r).sass, (std::set<ComputeCapability>{{7, 5}}));
  // The H200 ran this natively with PTX JIT off: the runtime linked the
  // relocatable sm_90 cubin at load time.
  const FileVerdict h200 = judge_file(r, {9, 0});
  EXPECT_EQ(h200.verdict.outcome, Outcome::native) << h200.verdict.detail;
  EXPECT_TRUE(h200.relinked);
  EXPECT_NE(h200.verdict.detail.find("the device-linked code has nothing for 9.0, so the runtime links "
                                     "__nv_relfatbin's relocatable images"),
            std::string::npos)
      << h200.verdict.detail;
  const FileVerdict t4 = judge_file(r, {7, 5});
  EXPECT_EQ(t4.verdict.outcome, Outcome::native);
  EXPECT_FALSE(t4.relinked);
  EXPECT_EQ(judge_file(r, {10, 0}).verdict.outcome, Outcome::none);
}

// Issue 27: nvcc 13.0's device link drops a PTX target, so an -rdc build's
// PTX is in __nv_relfatbin only; it is listed, and named as relocatable only.
TEST(ModuleNvcc, TheDeviceLinkMakesNoPtxSoRdcPtxIsRelocatableOnly) {
  ORC_NVCC_OUTPUT(path, "rdc-ptx90");
  const FileReport r = inspect_one(path);
  EXPECT_EQ(r.ptx, (std::set<ComputeCapability>{{9, 0}}));  // as cuobjdump -all lists it
  for (const Module& m : r.modules)
    if (m.loadable()) EXPECT_TRUE(m.ptx.empty()) << "a registered module holds PTX at " << m.offset;
  const CodeSets loadable = loadable_code(r);
  EXPECT_EQ(loadable.sass, (std::set<ComputeCapability>{{9, 0}}));
  EXPECT_TRUE(loadable.ptx.empty());
  const CodeSets only = relocatable_only_code(r);
  EXPECT_TRUE(only.sass.empty());  // the device link made sm_90 too
  EXPECT_EQ(only.ptx, (std::set<ComputeCapability>{{9, 0}}));
  // On a GPU above 9.0 the device-linked code has nothing, and the runtime
  // JIT-links the relocatable PTX (the H200 record's rdc-sm75-compute80 case).
  const FileVerdict blackwell = judge_file(r, {10, 0});
  EXPECT_EQ(blackwell.verdict.outcome, Outcome::jit) << blackwell.verdict.detail;
  EXPECT_TRUE(blackwell.relinked);
}

TEST(ModuleNvcc, ObjectsAndPlainBuildsHoldNothingRelocatableOnly) {
  ORC_NVCC_OUTPUT(object, "kr.o");
  const CodeSets in_object = relocatable_only_code(inspect_one(object));
  EXPECT_TRUE(in_object.sass.empty() && in_object.ptx.empty()) << "an object's code all waits for a link";
  ORC_NVCC_OUTPUT(plain, "t75");
  const CodeSets in_plain = relocatable_only_code(inspect_one(plain));
  EXPECT_TRUE(in_plain.sass.empty() && in_plain.ptx.empty());
}

TEST(ModuleNvcc, TheDeviceLinkModuleHasNoKernelAndDoesNotDecide) {
  ORC_NVCC_OUTPUT(path, "t75");
  const FileReport r = inspect_one(path);
  const auto kernels = std::ranges::count_if(r.modules, [](const Module& m) { return m.kernels == Kernels::yes; });
  const auto none = std::ranges::count_if(r.modules, [](const Module& m) { return m.kernels == Kernels::no; });
  EXPECT_EQ(kernels, 1);  // k.cu's; m.cu's and the device link's hold none
  EXPECT_EQ(none, static_cast<long>(r.modules.size()) - 1);
  const FileVerdict v = judge_file(r, {9, 0});
  EXPECT_EQ(v.verdict.outcome, Outcome::jit) << v.verdict.detail;
  EXPECT_EQ(v.kernel_modules, 1u);
  // The static runtime is 13's: nvcc links its own libcudart_static.a.
  ASSERT_TRUE(r.runtime);
  EXPECT_EQ(r.runtime->major, 13);
  EXPECT_EQ(r.runtime->from, "static, device-linked by CUDA 13.0");
}

TEST(ModuleNvcc, ARuntimeNewerThanTheDriverFailsBeforeAnyKernel) {
  ORC_NVCC_OUTPUT(path, "t75");
  const FileReport r = inspect_one(path);
  const FileVerdict old = judge_file(r, {9, 0}, facts_for("550.54.14"));
  EXPECT_EQ(old.verdict.outcome, Outcome::none);
  EXPECT_NE(old.verdict.detail.find("cudaErrorInsufficientDriver (35)"), std::string::npos) << old.verdict.detail;
  EXPECT_EQ(judge_file(r, {9, 0}, facts_for("580.65.06")).verdict.outcome, Outcome::jit);
}

TEST(ModuleNvcc, KernelsAreFoundInCompressedImagesToo) {
  ORC_NVCC_OUTPUT(path, "all.fatbin");
  const FileReport r = inspect_one(path);
  ASSERT_EQ(r.modules.size(), 1u);
  EXPECT_TRUE(r.compressed);
  EXPECT_EQ(r.modules[0].kernels, Kernels::yes);
  EXPECT_EQ(r.modules[0].toolkit, util::Version(13, 0));
}

TEST(ModuleNvcc, ADeviceFunctionIsNoEntryPoint) {
  ORC_NVCC_OUTPUT(dev, "dev.cubin");
  ORC_NVCC_OUTPUT(kernel, "c90.cubin");
  EXPECT_EQ(cubin_has_entry(testing::read_file(dev)), false);
  EXPECT_EQ(cubin_has_entry(testing::read_file(kernel)), true);
}

TEST(ModuleNvcc, ObjectsWithRelocatableCodeNeedADeviceLink) {
  ORC_NVCC_OUTPUT(rdc, "kr.o");
  ORC_NVCC_OUTPUT(whole, "k.o");
  const FileVerdict link = judge_file(inspect_one(rdc), {8, 0});
  EXPECT_EQ(link.verdict.outcome, Outcome::link);
  EXPECT_NE(link.verdict.detail.find("offers sm_80 SASS"), std::string::npos) << link.verdict.detail;
  // Whole-program code in a .o loads as is once linked into a host binary.
  EXPECT_EQ(judge_file(inspect_one(whole), {8, 0}).verdict.outcome, Outcome::native);
}

}  // namespace
}  // namespace orc::inspect
