// The arch of a cubin (an ELF with e_machine 190, EM_CUDA) as cuobjdump 13.0
// names it (fatbin-format.md 3.2-3.6).
//
// The SM number is in e_flags, laid out by EI_ABIVERSION:
//   ABI v1 (EI_ABIVERSION <= 7): SM = e_flags & 0xff; 0x800 is
//     EF_CUDA_ACCELERATORS, the 'a' of sm_90a.
//   ABI v2 (EI_ABIVERSION >= 8, all of CUDA 13): SM = (e_flags >> 8) & 0xff;
//     'a' is *not* in e_flags (sm_90 and sm_90a cubins have the same flags).
// 'a' is recorded in the .nv.compat section (type SHT_CUDA_COMPAT,
// 0x70000086), a list of .nv.info-style records:
//   u8 format; u8 attribute; then by format
//     1 NVAL: 2 pad bytes               (4 bytes in all)
//     2 BVAL: u8 value, 1 pad byte      (4 bytes in all)
//     3 HVAL: u16 value                 (4 bytes in all)
//     4 SVAL: u16 size, `size` bytes    (4 + size bytes)
// Attribute 0x09 (CUDA_ACCELERATOR_TARGET) as a BVAL of 1 means 'a'. The 'f'
// of sm_100f is recorded nowhere a listing reads (only in the ptxas command
// line note), so cubin names never carry it.
#include <string>

#include "orchestrator/inspect/elf.hpp"

namespace orc::inspect {

namespace {

constexpr std::uint32_t k_sht_cuda_compat = 0x70000086;
constexpr std::uint8_t k_abi_v2 = 8;
constexpr std::uint32_t k_ef_cuda_accelerators_v1 = 0x800;
constexpr std::uint8_t k_attr_accelerator_target = 0x09;

enum : std::uint8_t { k_fmt_nval = 1, k_fmt_bval = 2, k_fmt_hval = 3, k_fmt_sval = 4 };

std::unexpected<ParseFailure> corrupt(std::uint64_t offset, std::string what) {
  return std::unexpected(ParseFailure{ParseFailure::Kind::corrupt, Damage{offset, std::move(what)}});
}

// Whether .nv.compat holds attribute 9 = 1. A cubin without the section is
// simply not arch-specific; a record that runs past the section or has an
// unknown format makes the cubin corrupt (offsets are in the file).
std::expected<bool, ParseFailure> compat_accelerator_target(const ElfFile& elf, Bytes cubin) {
  const Section* compat = nullptr;
  for (const Section& s : elf.sections)
    if (s.type == k_sht_cuda_compat) {
      compat = &s;
      break;
    }
  if (!compat) return false;
  const auto records = sub(cubin, compat->offset, compat->size);
  if (!records) return corrupt(compat->offset, ".nv.compat lies outside the cubin");  // parse_elf checked; defensive

  bool accelerator_target = false;
  std::uint64_t at = 0;
  while (at < records->size()) {
    const auto format = read_le<std::uint8_t>(*records, at);
    const auto attribute = read_le<std::uint8_t>(*records, at + 1);
    const auto word = read_le<std::uint16_t>(*records, at + 2);  // BVAL value + pad, HVAL value, SVAL size
    if (!format || !attribute || !word)
      return corrupt(compat->offset + at, ".nv.compat record runs past the end of the section");
    std::uint64_t record_size = 4;
    switch (*format) {
      case k_fmt_nval:
      case k_fmt_hval:
        break;
      case k_fmt_bval:
        if (*attribute == k_attr_accelerator_target) accelerator_target = (*word & 0xff) == 1;
        break;
      case k_fmt_sval:
        record_size += *word;
        if (!sub(*records, at, record_size))
          return corrupt(compat->offset + at, ".nv.compat record runs past the end of the section");
        break;
      default:
        return corrupt(compat->offset + at, "unknown .nv.compat record format " + std::to_string(*format));
    }
    at += record_size;
  }
  return accelerator_target;
}

}  // namespace

std::expected<CubinArch, ParseFailure> cubin_arch(Bytes cubin) {
  auto elf = parse_elf(cubin);
  if (!elf) return std::unexpected(std::move(elf.error()));
  if (elf->machine != k_em_cuda)
    return std::unexpected(ParseFailure{ParseFailure::Kind::not_this_format,
                                        Damage{18, "not a cubin (e_machine " + std::to_string(elf->machine) + ")"}});
  const bool v2 = elf->abi_version >= k_abi_v2;
  CubinArch arch;
  arch.sm = static_cast<int>(v2 ? (elf->flags >> 8) & 0xff : elf->flags & 0xff);
  if (arch.sm == 0) return corrupt(elf->is64 ? 48 : 36, "cubin e_flags name no SM");
  const auto compat = compat_accelerator_target(*elf, cubin);
  if (!compat) return std::unexpected(compat.error());
  arch.arch_specific = *compat || (!v2 && (elf->flags & k_ef_cuda_accelerators_v1) != 0);
  return arch;
}

}  // namespace orc::inspect
