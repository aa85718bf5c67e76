#pragma once
// Host ELF files (32- and 64-bit, little-endian): the section table, enough to
// find .nv_fatbin and __nv_relfatbin; and cubins (e_machine 190, EM_CUDA).
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/model.hpp"

namespace orc::inspect {

inline constexpr std::uint16_t k_em_cuda = 190;

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint32_t link = 0;    // sh_link: the string table of a symbol or dynamic section
  std::uint64_t flags = 0;   // sh_flags: 2 SHF_ALLOC, 4 SHF_EXECINSTR
  std::uint64_t offset = 0;  // in the file
  std::uint64_t size = 0;    // 0 for SHT_NOBITS
};

struct ElfFile {
  bool is64 = true;
  std::uint16_t type = 0;  // e_type: 1 ET_REL (.o), 2 ET_EXEC, 3 ET_DYN (.so, PIE)
  std::uint16_t machine = 0;
  std::uint8_t abi_version = 0;  // e_ident[EI_ABIVERSION]
  std::uint32_t flags = 0;       // e_flags
  std::vector<Section> sections;

  const Section* find(std::string_view name) const;
};

inline constexpr std::uint16_t k_et_rel = 1;

// not_this_format when the bytes do not start with an ELF identification.
std::expected<ElfFile, ParseFailure> parse_elf(Bytes data);

// What the dynamic section says the loader needs: the DT_NEEDED names
// ("libcudart.so.12"), in order, and the file's own DT_SONAME. A file
// without a dynamic section (an object, a static executable) has neither and
// no damage; a section whose entries or names cannot be read has `damage`,
// with the names read before it.
struct DynamicInfo {
  std::vector<std::string> needed;
  std::string soname;  // empty when the file names none
  std::optional<Damage> damage;
};
DynamicInfo read_dynamic(Bytes data, const ElfFile& elf);

// The names of the undefined symbols of .dynsym: what a library imports.
std::vector<std::string> imported_symbols(Bytes data, const ElfFile& elf);

// Whether a cubin defines a kernel entry point: a function symbol that
// ptxas marks STO_CUDA_ENTRY (st_other 0x10) in .symtab; device functions
// and the device link's module have none. nullopt when the cubin has no
// readable symbol table.
std::optional<bool> cubin_has_entry(Bytes cubin);

// The names of those kernel entry points, sorted (an unreadable name is
// empty); nullopt as above. Names are bounded in length and in total.
std::optional<std::vector<std::string>> cubin_entries(Bytes cubin);

struct CubinArch {
  int sm = 0;                  // 90
  bool arch_specific = false;  // 'a', from e_flags (ABI v1) or .nv.compat attribute 9
};

// The arch cuobjdump prints for a cubin (fatbin-format.md 3.6).
std::expected<CubinArch, ParseFailure> cubin_arch(Bytes cubin);

}  // namespace orc::inspect
