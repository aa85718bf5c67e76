#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/smoke/driver_api.hpp"
#include "orchestrator/smoke/result.hpp"
#include "orchestrator/smoke/runner.hpp"
#include "tests/unit/smoke/smoke_fixture.hpp"

namespace orc::smoke {
namespace {

using fixtures::passing;

TEST(Classify, DriverCodesAndJitSignals) {
  EXPECT_EQ(classify_load(cu::k_error_no_binary_for_gpu, {}), LoadOutcome::none);
  EXPECT_EQ(classify_load(cu::k_error_invalid_ptx, {}), LoadOutcome::error);
  EXPECT_EQ(classify_load(cu::k_error_unsupported_ptx_version, {}), LoadOutcome::error);
  // What the H200 reported for compute_80 PTX (tests/gpu/matrix-observed-h200.txt).
  EXPECT_EQ(classify_load(0, {.binary_version = 90, .ptx_version = 80, .info_log = ""}), LoadOutcome::jit);
  EXPECT_EQ(classify_load(0, {.binary_version = 90, .ptx_version = 90, .info_log = ""}), LoadOutcome::native);
  EXPECT_EQ(classify_load(0, {.binary_version = 90,
                              .ptx_version = 90,
                              .info_log = "ptxas info    : Compiling entry function 'orc_saxpy' for 'sm_90'"}),
            LoadOutcome::jit);
  EXPECT_EQ(classify_load(0, {}), LoadOutcome::native);
}

TEST(SmokeResultTest, ExitCodes) {
  SmokeResult r = passing();
  EXPECT_EQ(r.exit_code(), util::ExitCode::ok);  // skipped is not failed
  r.gpus[0].kernels[0].status = KernelStatus::failed;
  EXPECT_EQ(r.exit_code(), util::ExitCode::check_failed);
  r = passing();
  r.gpus[0].load->outcome = LoadOutcome::none;
  EXPECT_EQ(r.exit_code(), util::ExitCode::check_failed);
  r = passing();
  r.gpus[0].artifacts.push_back(
      {.where = "x.so .nv_fatbin[0]", .predicted = "none", .load = {.outcome = LoadOutcome::none}});
  EXPECT_EQ(r.exit_code(), util::ExitCode::check_failed);
  EXPECT_TRUE(r.gpus[0].artifacts[0].agrees());
  EXPECT_EQ(SmokeResult{}.exit_code(), util::ExitCode::outside_failure);  // no GPU proves nothing
  EXPECT_EQ((SmokeResult{.driver_error = "no NVIDIA driver on this machine"}).exit_code(),
            util::ExitCode::outside_failure);
}

// A module that cannot fail a launch (no kernel: nvcc's device-link module),
// or one the runtime replaces by linking __nv_relfatbin's images, is
// recorded and does not fail the GPU (the H200 ran both kinds of program).
TEST(SmokeResultTest, ModulesThatCannotFailALaunchDoNotDecide) {
  SmokeResult r = passing();
  r.gpus[0].artifacts.push_back(
      {.where = "app .nv_fatbin[0]", .predicted = "none", .load = {.outcome = LoadOutcome::none}, .kernels = false});
  EXPECT_EQ(r.exit_code(), util::ExitCode::ok);
  r.gpus[0].artifacts.push_back({.where = "librdc.so .nv_fatbin[0]",
                                 .predicted = "none",
                                 .load = {.outcome = LoadOutcome::none},
                                 .kernels = true,
                                 .relinked = true});
  EXPECT_EQ(r.exit_code(), util::ExitCode::ok);
  r.gpus[0].artifacts.back().relinked = false;  // a kernel module that really has nothing
  EXPECT_EQ(r.exit_code(), util::ExitCode::check_failed);
}

TEST(SmokeResultTest, AttestationIsCanonicalAndSmall) {
  const std::string a = smoke_attestation_json(passing(), "sha256:00ff", "2026-11-29T00:00:00Z");
  EXPECT_EQ(a, smoke_attestation_json(passing(), "sha256:00ff", "2026-11-29T00:00:00Z"));
  const auto j = nlohmann::json::parse(a);
  EXPECT_EQ(j.dump(), a);  // keys sorted, no whitespace: the bytes a signature covers
  EXPECT_EQ(j["type"], "orchestrate.smoke.v1");
  EXPECT_EQ(j["subject"], "sha256:00ff");
  EXPECT_EQ(j["gpus"][0]["outcome"], "native");
  EXPECT_EQ(j["gpus"][0]["kernels"]["skipped"], 1);
  EXPECT_EQ(j["passed"], true);
}

TEST(Driver, MissingLibraryIsAClearResultNotACrash) {
  const auto api = load_driver("libcuda-does-not-exist.so.1");
  ASSERT_FALSE(api);
  EXPECT_EQ(api.error().kind, DriverLoadError::Kind::no_library);
  EXPECT_TRUE(api.error().message.starts_with("no NVIDIA driver on this machine (")) << api.error().message;
  const auto opened = Driver::open({.soname = "libcuda-does-not-exist.so.1"});
  ASSERT_FALSE(opened);
  EXPECT_TRUE(opened.error().starts_with("no NVIDIA driver on this machine")) << opened.error();
}

TEST(Driver, LibraryWithoutTheApiIsRefusedByName) {
  const auto api = load_driver("libm.so.6");
  ASSERT_FALSE(api);
  EXPECT_EQ(api.error().kind, DriverLoadError::Kind::missing_symbol);
  EXPECT_NE(api.error().message.find("cuInit"), std::string::npos) << api.error().message;
}

TEST(Driver, KernelModuleVersion) {
  EXPECT_EQ(parse_kernel_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Oct 14 2025\n"
                                        "GCC version:  gcc version 13.3.0\n"),
            "580.159.04");
  EXPECT_EQ(parse_kernel_driver_version("nothing here"), "");
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12080), "12.8");
}

}  // namespace
}  // namespace orc::smoke
