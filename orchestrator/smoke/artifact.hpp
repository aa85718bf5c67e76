#pragma once
// Every loadable piece of device code an artifact embeds, found with the
// inspector's readers: each fatbin container of a host ELF's .nv_fatbin
// section, a standalone fatbin's containers, a cubin, and the same inside ar
// members and package members (wheels, tarballs; one level of nesting, as
// `inspect` reads them). Loading each one with the driver is the direct
// proof that the artifact has kernels for a GPU.
//
// __nv_relfatbin (relocatable device code for the device linker) is not
// loaded: the driver cannot load it by itself. Its images are attached to
// each module of the same file, because where the device-linked code has
// nothing for a GPU the CUDA runtime links them at load time (seen on the
// H200), so such a module's failed load does not decide.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/inspect/module.hpp"

namespace orc::smoke {

struct EmbeddedFatbin {
  std::string where;                 // "lib/libx.so .nv_fatbin[2]", "dist/x.whl!/pkg/libx.so .nv_fatbin[0]"
  std::span<const std::byte> bytes;  // valid only during the visit; 8-byte aligned
  std::set<arch::ComputeCapability> sass;
  std::set<arch::ComputeCapability> ptx;
  std::vector<inspect::PtxImage> ptx_images;  // with their PTX ISA, for a driver-aware prediction
  // Whether it defines a kernel: a module without one (the device link's)
  // cannot fail a launch, so its load does not decide a smoke result.
  inspect::Kernels kernels = inspect::Kernels::unknown;
  // Its module, and the file's __nv_relfatbin modules (empty for anything
  // but a linked ELF), for inspect::judge_module's -rdc fallback.
  inspect::Module module;
  std::vector<inspect::Module> relocatable;
};

using FatbinVisitor = std::function<void(const EmbeddedFatbin&)>;

// Visits every loadable image of the file at `path`, in file order, and
// returns how many there were. Throws util::Failure (bad_input) when the file
// cannot be read.
std::size_t for_each_fatbin(const std::filesystem::path& path, const FatbinVisitor& visit);

// The same over bytes in memory; `where` names them in the visits.
std::size_t for_each_fatbin_in(std::span<const std::byte> data, const std::string& where, const FatbinVisitor& visit);

}  // namespace orc::smoke
