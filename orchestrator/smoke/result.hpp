#pragma once
// What a smoke run found (DESIGN.md's SmokeResult): per GPU, how the
// kernels' fatbin loaded (native, jit or none), each kernel's result and
// time, and how every fatbin embedded in an artifact loaded.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/smoke/kernels.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::smoke {

// none is the driver's "no kernel image" (error 209); error is any other
// failure to load (invalid PTX, a PTX ISA newer than the driver, ...).
enum class LoadOutcome { native, jit, none, error };
std::string_view load_outcome_name(LoadOutcome o);

// What the driver tells about a load, from which native and jit are told
// apart: a function whose PTX version is below its binary version came from
// older PTX through the JIT; a verbose JIT info log that shows ptxas at work
// means the load compiled PTX (the JIT cache is disabled for the run).
struct JitSignals {
  int binary_version = 0;  // CU_FUNC_ATTRIBUTE_BINARY_VERSION of a probe function; 0 = unknown
  int ptx_version = 0;     // CU_FUNC_ATTRIBUTE_PTX_VERSION; 0 = unknown
  std::string info_log;    // CU_JIT_INFO_LOG_BUFFER with CU_JIT_LOG_VERBOSE
};

LoadOutcome classify_load(int cu_result, const JitSignals& signals);
// Whether the info log says PTX was compiled.
bool info_log_shows_jit(std::string_view info_log);

struct LoadObservation {
  LoadOutcome outcome = LoadOutcome::error;
  int cu_result = 0;
  std::string error_name;  // "CUDA_ERROR_NO_BINARY_FOR_GPU"; empty on success
  double load_ms = 0;      // wall time of the load call
  double jit_ms = 0;       // CU_JIT_WALL_TIME: the driver's own account of JIT time
  JitSignals signals;
  std::string error_log;  // CU_JIT_ERROR_LOG_BUFFER
};

struct KernelResult {
  std::string name;
  KernelStatus status = KernelStatus::error;
  std::string detail;    // why it failed or was skipped
  int compiled_for = 0;  // __CUDA_ARCH__ of the code that ran (status[1]); 0 = unknown
  std::size_t checked = 0;
  std::size_t wrong = 0;
  double max_error = 0;
  double median_us = 0;  // host-timed launch + synchronize, median of the timing runs
};

// One fatbin found in an artifact, loaded on one GPU.
struct ArtifactLoad {
  std::string where;  // "lib/libx.so .nv_fatbin[3]"
  std::uint64_t size = 0;
  std::string predicted;  // the inspector's verdict for this GPU: native | jit | none | unknown
  LoadObservation load;
  // The module defines a kernel (or may: unknown counts as yes). One that
  // does not (nvcc's device-link module) cannot fail a launch: its load is
  // recorded, and does not decide whether the GPU passed.
  bool kernels = true;
  // The driver found nothing here for the GPU, but inspect predicts that the
  // runtime links the file's __nv_relfatbin images of its kernels for it
  // when a program loads the module (not tested by this load): recorded,
  // and it does not decide either.
  bool relinked = false;
  bool agrees() const;  // prediction equals observation (unknown agrees with nothing)
};

struct GpuResult {
  int ordinal = 0;
  std::string name;
  arch::ComputeCapability cc;
  bool cc_known = true;  // a CC the GPU tables have; unknown ones are never judged by rule
  int multiprocessors = 0;
  std::optional<LoadObservation> load;  // the smoke kernels' fatbin; absent when none was run
  std::vector<KernelResult> kernels;
  std::vector<ArtifactLoad> artifacts;
  std::vector<std::string> notes;  // "not one of tier-new's GPUs"
  bool passed() const;             // loaded, nothing failed, every artifact fatbin loaded
};

struct SmokeResult {
  std::string tier;
  std::string fatbin;                       // path of the kernels' fatbin
  std::string fatbin_sha256;                // of its bytes
  std::string driver_version;               // "580.159.04"; empty when unknown
  int driver_cuda_version = 0;              // cuDriverGetVersion: 13000
  std::optional<std::string> driver_error;  // no driver, no GPU, cuInit failed
  std::uint64_t seed = 0;                   // of the random inputs, to reproduce a failure
  std::vector<GpuResult> gpus;

  // 3 when the driver failed or there is no GPU (nothing was proven), 1 when
  // a GPU got none, an error, or a wrong result, 0 otherwise.
  util::ExitCode exit_code() const;
};

// "13.0" from 13000.
std::string cuda_version_text(int driver_cuda_version);

// The attestation a manifest carries for one tier: compact, canonical JSON
// (keys sorted) of what was run where and how it went, without logs or
// per-element data, ready to be signed as bytes. `artifact_digest` is the
// "sha256:..." of the manifest or artifact it vouches for.
std::string smoke_attestation_json(const SmokeResult& result, std::string_view artifact_digest,
                                   std::string_view created_utc);

}  // namespace orc::smoke
