#pragma once
// Host ELF files (32- and 64-bit, little-endian): the section table, enough to
// find .nv_fatbin and __nv_relfatbin; and cubins (e_machine 190, EM_CUDA).
#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/model.hpp"

namespace orc::inspect {

inline constexpr std::uint16_t k_em_cuda = 190;

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;  // in the file
  std::uint64_t size = 0;    // 0 for SHT_NOBITS
};

struct ElfFile {
  bool is64 = true;
  std::uint16_t machine = 0;
  std::uint8_t abi_version = 0;  // e_ident[EI_ABIVERSION]
  std::uint32_t flags = 0;       // e_flags
  std::vector<Section> sections;

  const Section* find(std::string_view name) const;
};

// not_this_format when the bytes do not start with an ELF identification.
std::expected<ElfFile, ParseFailure> parse_elf(Bytes data);

struct CubinArch {
  int sm = 0;                   // 90
  bool arch_specific = false;   // 'a', from e_flags (ABI v1) or .nv.compat attribute 9
};

// The arch cuobjdump prints for a cubin (fatbin-format.md 3.6).
std::expected<CubinArch, ParseFailure> cubin_arch(Bytes cubin);

}  // namespace orc::inspect
