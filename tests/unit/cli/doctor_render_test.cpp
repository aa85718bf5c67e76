// orchestrate doctor's framework discovery on a fake site-packages tree that
// holds a real CUDA-built library (nvcc 13.0 at /usr/local/cuda, else
// $ORC_NVCC; skipped without one), as the command line renders it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "orchestrator/app/doctor/doctor.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/util/process.hpp"

namespace orc::cli {
namespace {

namespace fs = std::filesystem;

TEST(Doctor, FindsTorchAndBundledLibrariesAndJudgesThemWithoutAGpu) {
  const std::string nvcc = std::getenv("ORC_NVCC") ? std::getenv("ORC_NVCC") : "/usr/local/cuda/bin/nvcc";
  if (::access(nvcc.c_str(), X_OK) != 0) GTEST_SKIP() << "no nvcc at " << nvcc;
  const fs::path site = fs::temp_directory_path() / ("orc-doctor-" + std::to_string(::getpid())) / "site-packages";
  fs::create_directories(site / "torch" / "lib");
  fs::create_directories(site / "nvidia" / "cublas" / "lib");
  std::ofstream(site / "k.cu") << "__global__ void add(float* a) { a[threadIdx.x] += 1; }\n";
  const auto built =
      util::run_process({.argv = {nvcc, "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_80,code=sm_80",
                                  "-o", (site / "torch/lib/libtorch_cuda.so").string(), (site / "k.cu").string()},
                         .merge_stderr = true});
  ASSERT_TRUE(built && built->ok()) << (built ? built->out : built.error().message);
  // A host-only library where the CUDA ones live, and a torch library doctor does not read.
  fs::copy_file(site / "torch/lib/libtorch_cuda.so", site / "torch/lib/libtorch_cpu.so");
  std::ofstream(site / "nvidia/cublas/lib/libcublas.so.13") << "\x7f"
                                                               "ELF not really";

  const auto found = app::find_framework_libraries(site);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].first, "nvidia-cublas");
  EXPECT_EQ(found[1].first, "pytorch");

  const app::DoctorReport r =
      app::doctor({.paths = {site}, .search_python = false, .driver_library = "libcuda-does-not-exist.so.1"});
  ASSERT_TRUE(r.driver_error.has_value());
  EXPECT_TRUE(r.gpus.empty());
  ASSERT_EQ(r.libraries.size(), 2u);
  const app::FrameworkLibrary& torch = r.libraries[1];
  EXPECT_TRUE(torch.device_code);
  EXPECT_EQ(torch.sass, (std::vector<std::string>{"sm_80"}));
  EXPECT_FALSE(r.libraries[0].device_code);
  const std::string text = render(r, Format::text);
  EXPECT_NE(text.find("GPUs: none usable: no NVIDIA driver on this machine"), std::string::npos) << text;
  EXPECT_NE(text.find("pytorch: " + (site / "torch/lib/libtorch_cuda.so").string() + "\n    SASS sm_80; PTX -"),
            std::string::npos)
      << text;
  const auto j = nlohmann::json::parse(render(r, Format::json));
  EXPECT_EQ(j["libraries"][1]["framework"], "pytorch");
  EXPECT_TRUE(j["gpus"].empty());
  fs::remove_all(site.parent_path());
}

// Issue 12: a verdict names its GPU by separate fields (ordinal, name, cc),
// never one fused label such as "GPU 0 (9.0)"; the text says it that way.
TEST(Doctor, AVerdictNamesItsGpuBySeparateFields) {
  app::DoctorReport r;
  r.driver_version = "580.159.04";
  r.gpus = {{.name = "NVIDIA H200", .cc = {9, 0}, .architecture = "Hopper"}};
  r.libraries = {{.framework = "pytorch",
                  .path = "/site/torch/lib/libtorch_cuda.so",
                  .device_code = true,
                  .sass = {"sm_90"},
                  .ptx = {},
                  .verdicts = {{.gpu = 0, .cc = {9, 0}, .outcome = "native", .detail = "sm_90 SASS"}}}};
  const auto j = nlohmann::json::parse(render(r, Format::json));
  const auto& v = j["libraries"][0]["verdicts"][0];
  EXPECT_EQ(v["gpu"], 0);
  EXPECT_EQ(v["name"], "NVIDIA H200");
  EXPECT_EQ(v["cc"], "9.0");
  EXPECT_EQ(v["outcome"], "native");
  const std::string text = render(r, Format::text);
  EXPECT_NE(text.find("GPU 0 (9.0):  native  sm_90 SASS"), std::string::npos) << text;
}

// Issue 27: every host toolkit with what it lacks; one lacking what every
// build needs is said to be never planned with.
TEST(Doctor, EachHostToolkitSaysWhatItLacks) {
  app::DoctorReport r;
  r.driver_error = "no NVIDIA driver";
  using compat::ToolkitPart;
  r.toolkits = {{.version = util::Version(std::vector<int>{13, 0, 88}),
                 .root = "/usr/local/cuda-13.0",
                 .found_by = "PATH",
                 .inventory = {.missing = {{.part = ToolkitPart::npp, .files = {"libnppc.so", "npp.h"}}}}},
                {.version = util::Version(std::vector<int>{12, 4, 131}),
                 .root = "/t/cuda-12.4",
                 .found_by = "ORCHESTRATE_HOST_TOOLKITS",
                 .inventory = {.missing = {{.part = ToolkitPart::cudart, .files = {"libcudart.so"}},
                                           {.part = ToolkitPart::nccl, .files = {"libnccl.so", "nccl.h"}}}}}};
  const std::string text = render(r, Format::text);
  EXPECT_NE(text.find("host toolkits (what the host engine plans with):\n"
                      "  13.0.88 /usr/local/cuda-13.0: complete; without npp\n"
                      "  12.4.131 /t/cuda-12.4: INCOMPLETE, never planned: lacks the shared CUDA runtime "
                      "(libcudart.so); without nccl\n"),
            std::string::npos)
      << text;
  const auto j = nlohmann::json::parse(render(r, Format::json));
  ASSERT_EQ(j["toolkits"].size(), 2u);
  EXPECT_EQ(j["toolkits"][0]["complete"], true);
  EXPECT_EQ(j["toolkits"][1]["complete"], false);
  EXPECT_EQ(j["toolkits"][1]["found_by"], "ORCHESTRATE_HOST_TOOLKITS");
  EXPECT_EQ(j["toolkits"][1]["lacks"][0]["part"], "cudart");
  EXPECT_EQ(j["toolkits"][1]["lacks"][0]["always_needed"], true);
  EXPECT_EQ(j["toolkits"][1]["lacks"][1]["files"], (std::vector<std::string>{"libnccl.so", "nccl.h"}));
}

}  // namespace
}  // namespace orc::cli
