// judge_file's rules on reports made by hand: which modules decide, PTX the
// driver cannot compile, a runtime newer than the driver, and libraries that
// load their own kernels. The same rules on real nvcc output are in
// module_nvcc_test.cpp; the H200 record under tests/gpu/ checks them against
// the driver.
#include <gtest/gtest.h>

#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/inspect/verdict.hpp"

namespace orc::inspect {
namespace {

using arch::ComputeCapability;

Module kernel_module(std::set<ComputeCapability> sass, std::vector<PtxImage> ptx = {}, Kernels kernels = Kernels::yes) {
  return {.section = CodeSection::executable, .sass = std::move(sass), .ptx = std::move(ptx), .kernels = kernels};
}

// The table facts as compat states them for these rows (compat/driver.hpp).
DriverFacts facts(std::optional<const char*> driver, int max_isa_minor_of_8 = 4) {
  DriverFacts f;
  if (driver) {
    f.driver = *util::Version::parse(*driver);
    f.max_ptx_isa = util::Version(8, max_isa_minor_of_8);
  }
  f.driver_for_isa = [](const util::Version& isa) -> std::optional<util::Version> {
    if (isa == util::Version(8, 7)) return *util::Version::parse("570.26");
    if (isa == util::Version(9, 0)) return *util::Version::parse("580.65.06");
    return std::nullopt;
  };
  f.driver_for_runtime = [](int major) -> std::optional<util::Version> {
    if (major == 13) return *util::Version::parse("580.65.06");
    return std::nullopt;
  };
  return f;
}

TEST(FileVerdict, SomeKernelModulesWithoutCodeForTheGpuIsPartial) {
  FileReport r;
  r.modules = {kernel_module({{9, 0}}), kernel_module({{8, 0}})};
  const FileVerdict v = judge_file(r, {9, 0});
  EXPECT_EQ(v.verdict.outcome, Outcome::partial);
  EXPECT_EQ(v.module, 1u);
  EXPECT_EQ(v.kernel_modules, 2u);
  EXPECT_EQ(v.partial_modules, 1u);
  EXPECT_TRUE(
      v.verdict.detail.starts_with("2 loadable modules: 1 of 2 kernel modules have no code for 9.0 (the first "
                                   "at 0x0: sm_80): a launch of their kernels here fails"))
      << v.verdict.detail;
  EXPECT_TRUE(v.verdict.detail.ends_with("the others: runs natively from sm_90 SASS")) << v.verdict.detail;
}

TEST(FileVerdict, TheWorstOfTheModulesThatRunDecides) {
  FileReport r;
  r.modules = {kernel_module({{9, 0}}), kernel_module({}, {{{8, 0}, {9, 0}}})};
  const FileVerdict v = judge_file(r, {9, 0});
  EXPECT_EQ(v.verdict.outcome, Outcome::jit);
  EXPECT_EQ(v.module, 1u);
  EXPECT_TRUE(v.verdict.detail.starts_with("module 2 of 2 in .nv_fatbin (at 0x0): runs by JIT")) << v.verdict.detail;
}

TEST(FileVerdict, NoKernelModuleWithCodeIsNone) {
  FileReport r;
  r.modules = {kernel_module({{8, 0}}), kernel_module({{8, 6}})};
  EXPECT_EQ(judge_file(r, {9, 0}).verdict.outcome, Outcome::none);
}

TEST(FileVerdict, AModuleWithoutKernelsDoesNotDecide) {
  FileReport r;
  r.modules = {kernel_module({{7, 5}}, {}, Kernels::no), kernel_module({{7, 5}}, {{{7, 5}, {9, 0}}})};
  const FileVerdict v = judge_file(r, {9, 0});
  EXPECT_EQ(v.verdict.outcome, Outcome::jit) << v.verdict.detail;
  EXPECT_EQ(v.module, 1u);
  EXPECT_EQ(v.kernel_modules, 1u);
}

TEST(FileVerdict, AnUnreadableModuleCountsAsHoldingKernels) {
  FileReport r;
  r.modules = {kernel_module({{9, 0}}, {}, Kernels::no), kernel_module({{8, 0}}, {}, Kernels::unknown)};
  EXPECT_EQ(judge_file(r, {9, 0}).verdict.outcome, Outcome::none);
}

TEST(FileVerdict, PtxNewerThanTheDriverIsNone222) {
  FileReport r;
  r.modules = {kernel_module({}, {{{9, 0}, {8, 7}}})};
  const FileVerdict old = judge_file(r, {9, 0}, facts("550.54.14"));
  EXPECT_EQ(old.verdict.outcome, Outcome::none);
  EXPECT_NE(old.verdict.detail.find("PTX ISA 8.7 needs driver >= 570.26"), std::string::npos) << old.verdict.detail;
  EXPECT_NE(old.verdict.detail.find("CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)"), std::string::npos);
  EXPECT_EQ(judge_file(r, {9, 0}, facts("570.26", 7)).verdict.outcome, Outcome::jit);
  // Without a driver the JIT verdict names the driver it needs.
  const FileVerdict any = judge_file(r, {9, 0}, facts(std::nullopt));
  EXPECT_EQ(any.verdict.outcome, Outcome::jit);
  EXPECT_NE(any.verdict.detail.find("(PTX ISA 8.7 needs driver >= 570.26)"), std::string::npos) << any.verdict.detail;
}

TEST(FileVerdict, SassDoesNotDependOnThePtxIsa) {
  FileReport r;
  r.modules = {kernel_module({{9, 0}}, {{{9, 0}, {8, 7}}})};
  EXPECT_EQ(judge_file(r, {9, 0}, facts("550.54.14")).verdict.outcome, Outcome::native);
}

TEST(FileVerdict, ARuntimeNewerThanTheDriverIsNone35) {
  FileReport r;
  r.modules = {kernel_module({{9, 0}})};
  r.runtime = FileReport::Runtime{13, "libcudart.so.13"};
  const FileVerdict v = judge_file(r, {9, 0}, facts("550.54.14"));
  EXPECT_EQ(v.verdict.outcome, Outcome::none);
  EXPECT_EQ(v.verdict.detail,
            "the CUDA 13 runtime (libcudart.so.13) needs driver >= 580.65.06, the driver is 550.54.14: "
            "cudaErrorInsufficientDriver (35) before any kernel runs");
  EXPECT_EQ(judge_file(r, {9, 0}, facts("580.65.06")).verdict.outcome, Outcome::native);
}

TEST(FileVerdict, OnlyRelocatableCodeInALinkedFileNeverLoads) {
  FileReport r;
  Module m = kernel_module({{9, 0}});
  m.section = CodeSection::relocatable;
  r.modules = {m};
  const FileVerdict v = judge_file(r, {9, 0});
  EXPECT_EQ(v.verdict.outcome, Outcome::none);
  EXPECT_NE(v.verdict.detail.find("no device-linked module for the runtime to register"), std::string::npos);
  r.object = true;  // the same in a .o: it waits for the device link
  EXPECT_EQ(judge_file(r, {9, 0}).verdict.outcome, Outcome::link);
}

TEST(FileVerdict, TheRuntimeLinksRelocatableCodeWhenTheLinkedHasNothing) {
  FileReport r;
  Module rel = kernel_module({{8, 0}, {9, 0}}, {{{9, 0}, {8, 4}}});
  rel.section = CodeSection::relocatable;
  r.modules = {kernel_module({{7, 5}}), rel};
  const FileVerdict h200 = judge_file(r, {9, 0});
  EXPECT_EQ(h200.verdict.outcome, Outcome::native);
  EXPECT_TRUE(h200.relinked);
  // The device-linked code wins where it has code, as the driver picks it.
  const FileVerdict t4 = judge_file(r, {7, 5});
  EXPECT_EQ(t4.verdict.outcome, Outcome::native);
  EXPECT_FALSE(t4.relinked);
  EXPECT_EQ(judge_file(r, {7, 0}).verdict.outcome, Outcome::none);
}

// The three -rdc shapes a review built and ran on the H200 (kernels ka, kb,
// kc; device link for sm_75): the fallback links only the relocatable
// modules a device-linked module's kernels came from, kernel by kernel.
Module named(Module m, std::vector<std::string> names, CodeSection section = CodeSection::executable) {
  m.kernel_names = std::move(names);
  m.section = section;
  return m;
}

TEST(FileVerdict, RelinkCoversOnlyTheDeviceLinkedKernels) {
  const Module rel_a = named(kernel_module({{7, 5}, {9, 0}}), {"ka"}, CodeSection::relocatable);
  const Module rel_c = named(kernel_module({{7, 5}}), {"kc"}, CodeSection::relocatable);
  FileReport mixed;  // a: -rdc sm_75+sm_90; b: no -rdc, sm_75 only. Observed: a ran, b failed.
  mixed.modules = {named(kernel_module({{7, 5}}), {"ka"}), named(kernel_module({{7, 5}}), {"kb"}), rel_a};
  const FileVerdict m = judge_file(mixed, {9, 0});
  EXPECT_EQ(m.verdict.outcome, Outcome::partial) << m.verdict.detail;
  EXPECT_TRUE(m.relinked);

  FileReport mixed2 = mixed;  // b built for sm_90. Observed: both ran.
  mixed2.modules[1] = named(kernel_module({{9, 0}}), {"kb"});
  EXPECT_EQ(judge_file(mixed2, {9, 0}).verdict.outcome, Outcome::native);

  FileReport both;  // a and c device-linked together. Observed: ka ran, kc "named symbol not found".
  both.modules = {named(kernel_module({{7, 5}}), {"ka", "kc"}), rel_a, rel_c};
  const FileVerdict u = judge_file(both, {9, 0});
  EXPECT_EQ(u.verdict.outcome, Outcome::partial) << u.verdict.detail;
  EXPECT_NE(u.verdict.detail.find("1 of the 2 relocatable modules its kernels come from have no code for it"),
            std::string::npos)
      << u.verdict.detail;
}

TEST(FileVerdict, DeviceCodeWithoutAKernelHasNothingToLaunch) {
  // libcufftw's shape: an sm_75 stub without kernels; it NEEDs libcufft.
  FileReport r;
  r.modules = {kernel_module({{7, 5}}, {}, Kernels::no)};
  r.needed = {"libcufft.so.12", "libc.so.6"};
  const FileVerdict v = judge_file(r, {9, 0});
  EXPECT_EQ(v.verdict.outcome, Outcome::no_kernels);
  EXPECT_EQ(v.verdict.detail,
            "no module holds a kernel entry point: nothing of its own to launch; kernels come from what it loads "
            "(libcufft.so.12)");
}

TEST(FileVerdict, KernelsFromImagesTheLibraryLoadsItself) {
  // cuFFT's shape: a registered stub without kernels, images in .ldata.
  FileReport r;
  r.modules = {kernel_module({{7, 5}}, {}, Kernels::no)};
  r.runtime_code.sections = {".ldata"};
  r.runtime_code.containers = 3;
  r.runtime_code.sass = {{8, 0}, {9, 0}};
  r.runtime_code.builders = {"nvJitLink (names libnvJitLink.so)"};
  const FileVerdict v = judge_file(r, {9, 0});
  EXPECT_EQ(v.verdict.outcome, Outcome::native) << v.verdict.detail;
  EXPECT_TRUE(v.runtime_kernels);
  EXPECT_TRUE(v.verdict.detail.starts_with("kernels come from 3 fatbin images in .ldata")) << v.verdict.detail;
  // No image for the GPU: none, but flagged, so it is never proof of failure.
  const FileVerdict t4 = judge_file(r, {7, 0});
  EXPECT_EQ(t4.verdict.outcome, Outcome::none);
  EXPECT_TRUE(t4.runtime_kernels);
}

TEST(FileVerdict, RegisteredKernelsWithRunTimeBuildersSaySoInTheDetail) {
  FileReport r;
  r.modules = {kernel_module({{8, 0}})};
  r.runtime_code.builders = {"NVRTC (imports nvrtcCreateProgram)"};
  const FileVerdict v = judge_file(r, {9, 0});
  EXPECT_EQ(v.verdict.outcome, Outcome::none);
  // A builder alone (an application compiling a few kernels with NVRTC) does
  // not excuse registered kernels that cannot run: still a failure.
  EXPECT_FALSE(v.runtime_kernels);
  EXPECT_TRUE(v.verdict.detail.ends_with(
      "; kernels also built or loaded at run time (NVRTC (imports nvrtcCreateProgram)): this verdict covers only the "
      "registered modules"))
      << v.verdict.detail;
}

}  // namespace
}  // namespace orc::inspect
