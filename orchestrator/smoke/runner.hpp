#pragma once
// The runner: opens the driver, lists the GPUs, loads fatbins on each and
// runs the smoke kernels, all through the driver API (driver_api.hpp).
//
// Before cuInit it sets CUDA_CACHE_DISABLE=1 (every JIT is measured, not
// served from ~/.nv/ComputeCache) and CUDA_MODULE_LOADING=EAGER (a load
// compiles and resolves everything then, so its outcome and time belong to
// the load, not to the first launch). Both only affect this process.
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/smoke/driver_api.hpp"
#include "orchestrator/smoke/result.hpp"

namespace orc::smoke {

using ByteSpan = std::span<const std::byte>;

struct RunOptions {
  std::string soname = "libcuda.so.1";
  int timing_runs = 5;
  bool disable_jit_cache = true;
};

struct GpuInfo {
  int ordinal = 0;
  std::string name;
  arch::ComputeCapability cc;
  int multiprocessors = 0;
  bool cluster_launch = false;
};

// How to hand a fatbin to the driver: cuModuleLoadDataEx, or
// cuLibraryLoadData (CUDA 12.0+ drivers; falls back to the module API).
enum class Loader { module, library };

class Driver {
 public:
  // Errors are the sentence a user reads: "no NVIDIA driver on this machine
  // (libcuda.so.1: cannot open shared object file ...)", "no NVIDIA GPU on
  // this machine (cuInit: CUDA_ERROR_NO_DEVICE)".
  static std::expected<Driver, std::string> open(const RunOptions& options = {});

  // Each GPU's primary context is retained from open() to destruction, so
  // loading thousands of an artifact's fatbins does not recreate it.
  Driver(Driver&& other) noexcept;
  Driver& operator=(Driver&&) = delete;
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;
  ~Driver();

  const std::vector<GpuInfo>& gpus() const { return m_gpus; }
  int cuda_version() const { return m_cuda_version; }  // 13000
  const RunOptions& options() const { return m_options; }

  // Loads `image` (a fatbin, cubin or PTX) on GPU `ordinal` with JIT logs
  // and wall time, reads the binary and PTX versions of `probe` when named,
  // and unloads it.
  LoadObservation observe_load(int ordinal, ByteSpan image, std::string_view probe = {},
                               Loader loader = Loader::module) const;

  // Loads the smoke kernels' fatbin and runs every kernel of kernel_table()
  // with inputs drawn from `seed`, checks and times them.
  GpuResult smoke(int ordinal, ByteSpan fatbin, std::uint64_t seed) const;

 private:
  Driver() = default;
  // The context of GPU `ordinal` made current; a failure code otherwise.
  cu::Result make_current(int ordinal) const;

  DriverApi m_api;
  RunOptions m_options;
  int m_cuda_version = 0;
  std::vector<GpuInfo> m_gpus;
  std::vector<cu::Context> m_contexts;  // by ordinal; null where retaining failed
  std::vector<cu::Result> m_context_results;
};

}  // namespace orc::smoke
