#pragma once
// `orchestrate doctor`: this node's GPUs (name, compute capability), the
// driver and the CUDA version it supports, the toolkit on it, and for the
// frameworks installed (PyTorch's libtorch_cuda.so and the CUDA libraries
// its wheels bundle under nvidia/*/lib) whether each GPU runs their kernels
// natively, by JIT, or not at all, as the inspector reads them. A compute
// capability the GPU tables do not know gets "unknown", never a guess.
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/app/doctor/site_checks.hpp"
#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/site/host_toolkits.hpp"

namespace orc::app {

struct DoctorRequest {
  std::vector<std::filesystem::path> paths;  // --path: libraries, or directories searched like site-packages
  bool search_python = true;                 // ask python3 for its sys.path
  std::string driver_library = "libcuda.so.1";
};

struct DoctorGpu {
  std::string name;
  arch::ComputeCapability cc;
  std::string architecture;  // "Hopper"; empty when the tables do not know the CC
};

struct LibraryVerdict {
  std::size_t gpu = 0;  // the GPU's ordinal on this node (DoctorReport::gpus)
  arch::ComputeCapability cc;
  std::string outcome;  // native | jit | none | link | unknown
  std::string detail;
  bool runtime_kernels = false;  // the library loads or builds kernels itself (cuFFT, cuSPARSE, cuDNN)
};

struct FrameworkLibrary {
  std::string framework;  // "pytorch", "nvidia-cublas", "given"
  std::string path;
  bool device_code = false;
  std::vector<std::string> sass;  // "sm_90"
  std::vector<std::string> ptx;   // "compute_90"
  std::vector<LibraryVerdict> verdicts;
};

struct DoctorReport {
  std::optional<std::string> driver_error;  // "no NVIDIA driver on this machine (...)"
  std::string driver_version;               // "580.159.04"
  int driver_cuda_version = 0;              // 13000
  std::vector<DoctorGpu> gpus;
  std::string nvcc;     // path; empty when none was found
  std::string toolkit;  // "13.0.88"
  // Every toolkit the host engine finds (site::discover_host_toolkits), each
  // with the parts its tree lacks: one lacking what every build needs is
  // never planned with.
  std::vector<site::HostToolkit> toolkits;
  std::vector<std::string> searched;  // directories looked in for frameworks
  std::vector<FrameworkLibrary> libraries;
  // The site checks (site_checks.hpp), when they ran.
  std::optional<SiteReport> site;
};

DoctorReport doctor(const DoctorRequest& request);

// Per GPU, where the file runs as the runtime loads it (inspect::judge_file)
// with this node's driver (the kernel module's "580.65.06" and the CUDA
// version cuDriverGetVersion reports, see node_driver; empty / 0 when
// unknown); "unknown" for a GPU whose compute capability the tables do not know.
std::vector<LibraryVerdict> judge_library(const inspect::FileReport& file, const std::vector<DoctorGpu>& gpus,
                                          const std::string& driver_version, int driver_cuda_version = 0);

// What doctor inspects under one site-packages-like directory: torch/lib's
// libtorch_cuda*.so and nvidia/*/lib/*.so*, each with the framework it
// belongs to ("pytorch", "nvidia-<package>"). Sorted by path.
std::vector<std::pair<std::string, std::filesystem::path>> find_framework_libraries(const std::filesystem::path& dir);

}  // namespace orc::app
