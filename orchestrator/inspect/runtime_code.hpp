#pragma once
// Device code the CUDA runtime does not register: libraries that load or
// build their own kernels at run time.
//
// cuFFT 12 (CUDA 13.0) registers one sm_75 cubin with no kernel; its FFT
// kernels sit in ~24,000 fatbin containers in `.ldata` that it loads itself
// (cuModuleLoadData), beside LTO-IR it links at run time through nvJitLink.
// cuSPARSE keeps relocatable images in `.rodata` for nvJitLink; cuBLASLt and
// cuDNN's precompiled engines keep Blackwell images in `.cask_resource`;
// cuDNN's runtime fusion compiles with NVRTC. None of this is in
// `.nv_fatbin`, so a verdict from the registered modules alone says `none`
// for a library that works.
#include <set>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/inspect/module.hpp"

namespace orc::inspect {

struct RuntimeCode {
  std::vector<std::string> sections;  // data sections that hold fatbin containers
  std::size_t containers = 0;
  std::set<arch::ComputeCapability> sass;
  std::vector<PtxImage> ptx;
  std::size_t lto_entries = 0;
  // How the library builds kernels at run time: "nvJitLink", "NVRTC", each
  // with what showed it ("imports nvJitLinkCreate", "names libnvrtc.so").
  std::vector<std::string> builders;
  bool any() const { return containers > 0 || !builders.empty(); }
};

// Reads the allocated, non-executable PROGBITS sections other than
// `.nv_fatbin` and `__nv_relfatbin` for fatbin containers at 8-byte aligned
// offsets, each accepted only when its header and every entry header check
// out and the entries end exactly at the container's end; and the imports
// and data strings that name nvJitLink or NVRTC. Reads no code and
// decompresses nothing.
RuntimeCode find_runtime_code(Bytes data, const ElfFile& elf);

}  // namespace orc::inspect
