#pragma once
// Where a binary will run: for one GPU, native (a cubin it can load), jit
// (only PTX the driver compiles for it at load time), none ("no kernel image
// is available"), link (relocatable device code in a .o or .a: what runs
// depends on the device link still to come) or partial (a file of several
// kernel modules, some with code for the GPU and some without) or
// no_kernels (device code, but no kernel entry point: nothing to launch).
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/inspect/module.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::inspect {

struct FileReport;

enum class Outcome { native, jit, none, link, partial, no_kernels };
std::string_view outcome_name(Outcome o);

struct Verdict {
  Outcome outcome = Outcome::none;
  // The entry that decided it: the best cubin for native, the best PTX for jit.
  std::optional<arch::ComputeCapability> decided_by;
  std::string detail;            // one sentence a user can act on
  bool decided_by_sass = false;  // decided_by names a cubin (sm_XX), else PTX (compute_XX)
};

// What the driver of the node (or the oldest of a tier) can do. The facts
// come from compat's tables (PTX ISA per toolkit, the GA driver of each
// toolkit, minor-version compatibility); inspect sits beside compat, so the
// caller looks them up and hands them in.
struct DriverFacts {
  std::optional<util::Version> driver;  // the driver judged against; none: say what the JIT needs
  // The newest PTX ISA that driver JIT-compiles as far as the tables know;
  // empty when unknown.
  util::Version max_ptx_isa;
  // The driver is at or past the GA driver of the newest toolkit the tables
  // know: PTX newer than the tables may compile there, so it is not `none`.
  bool newer_than_tables = false;
  // The oldest driver whose JIT compiles a PTX ISA, and the oldest a CUDA
  // runtime major runs on; nullopt when the tables do not say.
  std::function<std::optional<util::Version>(const util::Version& isa)> driver_for_isa;
  std::function<std::optional<util::Version>(int runtime_major)> driver_for_runtime;
};

// Rules of cuda-compat.md 6.2 (ComputeCapability::sass_runs_on / ptx_runs_on).
// Among several cubins that load, the highest wins (what the driver picks);
// among PTX, the highest at or below the device whose ISA the driver knows.
// PTX images without an ISA (from a manifest) are judged by arch alone.
Verdict judge(const std::set<arch::ComputeCapability>& sass, const std::vector<PtxImage>& ptx,
              arch::ComputeCapability device, const DriverFacts& driver = {});
Verdict judge(const std::set<arch::ComputeCapability>& sass, const std::set<arch::ComputeCapability>& ptx,
              arch::ComputeCapability device, const DriverFacts& driver = {});

// A whole file, as the runtime loads it: only loadable modules count; each
// module that holds a kernel is judged on its own: when all run, the worst of
// them decides; when none runs, `none`; when some run and some do not,
// `partial` (a launch of a kernel in the latter fails). Modules with no
// kernel entry point (the device link's) do not decide. When the loadable
// code has nothing for the GPU, __nv_relfatbin's relocatable images do:
// the runtime links them at load time (seen on the H200). A .o or .a member
// with relocatable code gets `link`. A CUDA runtime newer than the driver
// makes everything `none` (cudaErrorInsufficientDriver, before any kernel).
struct FileVerdict {
  Verdict verdict;
  std::optional<std::size_t> module;  // index into FileReport::modules of the deciding module
  std::size_t kernel_modules = 0;     // loadable modules judged (with kernels or unknown)
  std::size_t partial_modules = 0;    // of those, the ones without code for the GPU (partial)
  bool relinked = false;              // decided by __nv_relfatbin, which the runtime links when .nv_fatbin has nothing
  // The file loads or builds kernels of its own at run time, so the verdict
  // speaks for the registered modules (or the images it embeds) only, and a
  // `none` is no proof that it fails: never exit 1 on that alone.
  bool runtime_kernels = false;
};
FileVerdict judge_file(const FileReport& file, arch::ComputeCapability device, const DriverFacts& driver = {});

// One loadable module of a file whose modules (relocatable ones included)
// are `modules`: its own verdict, or where it has nothing for the GPU, what
// the runtime's link of the relocatable images of its kernels gives.
struct ModuleVerdict {
  Verdict verdict;
  bool relinked = false;           // the relocatable images decided
  std::optional<Verdict> running;  // for a partial module: what its kernels that run get
};
// What code found only in relocatable modules (relocatable_only_code) means
// and what puts it in the registered module, for SASS or PTX: the words
// inspect's table, its --json and build verification share, after "PTX
// compute_120 is " or "planned SASS sm_90 is ". The runtime's load-time
// link of relocatable images is the H200's (tests/gpu/verdicts-h200.txt);
// that the device link makes SASS only is nvcc 13.0's (`nvcc -dlink
// --dryrun`: nvlink --arch=sm_XX per SASS target, a PTX target dropped).
std::string_view relocatable_only_why(bool ptx);

ModuleVerdict judge_module(const Module& module, const std::vector<Module>& modules, arch::ComputeCapability device,
                           const DriverFacts& driver = {});

}  // namespace orc::inspect
