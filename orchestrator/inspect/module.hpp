#pragma once
// Modules: the fatbin containers of a file as the CUDA runtime sees them.
//
// nvcc writes one container per translation unit and one for the device
// link; the runtime registers each container of `.nv_fatbin` as a module of
// its own (__cudaRegisterFatBinary), and the driver picks one image of each
// module for the GPU. `__nv_relfatbin` holds relocatable device code kept for
// a later device link (-rdc, -dlto; fatbin-format.md 1.1-1.3): the runtime
// loads the device-linked module of .nv_fatbin, and only where that has
// nothing for the GPU does it link the relocatable images of the kernels it
// holds at load time (seen on the H200, tests/gpu/verdicts-h200.txt). So
// whether a kernel runs is a question about the module that holds it.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/fatbin.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::inspect {

// Where a module's container sits, which says whether the runtime loads it.
enum class CodeSection {
  executable,   // `.nv_fatbin` of a host ELF: registered at start-up
  relocatable,  // `__nv_relfatbin`: input to a device link; linked at load only as a fallback
  standalone,   // a .fatbin or .cubin file: loaded as is by cuModuleLoad*
};
std::string_view code_section_name(CodeSection s);  // ".nv_fatbin", "__nv_relfatbin", "file"

// Whether a module defines a kernel (a __global__ function): only then can a
// launch fail for want of its code. `unknown` when no image of it could be
// read (a codec the tool cannot decode); it is judged as if it had kernels.
enum class Kernels { yes, no, unknown };
std::string_view kernels_name(Kernels k);  // yes, no, unknown

struct PtxImage {
  arch::ComputeCapability arch;
  util::Version isa;  // the PTX ISA of its `.version` line, from the entry header
};

struct Module {
  CodeSection section = CodeSection::executable;
  std::uint64_t offset = 0;  // of the container, in the file or member
  std::uint64_t size = 0;
  std::set<arch::ComputeCapability> sass;
  std::vector<PtxImage> ptx;  // file order
  std::size_t lto_entries = 0;
  Kernels kernels = Kernels::unknown;
  // The kernels' names, sorted, from the image that told `kernels` (empty
  // when unknown): they tie an -rdc build's device-linked module to the
  // relocatable modules its kernels came from.
  std::vector<std::string> kernel_names;
  // The toolkit a cubin of the module names in its .note.nv.tkinfo
  // ("Cuda compilation tools, release 13.0"), when one was read.
  std::optional<util::Version> toolkit;

  bool loadable() const { return section != CodeSection::relocatable; }
  std::set<arch::ComputeCapability> ptx_archs() const;
};

// The modules of one walk over `data`, in file order. With `look_inside`,
// each module's kernels and toolkit are read from the cheapest image that
// tells: an uncompressed cubin's symbol table or PTX text, else one
// decompressed image (the smallest); without it they stay unknown.
std::vector<Module> modules_of(Bytes data, const FatbinScan& scan, CodeSection section, bool look_inside);

}  // namespace orc::inspect
