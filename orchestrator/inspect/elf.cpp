// ELF section tables (host objects, libraries, executables and cubins);
// cubin naming is in cubin.cpp.
//
// Only what finding .nv_fatbin / __nv_relfatbin and naming a cubin needs is
// read: the identification, the file header's machine, flags and section
// table position, and each section's name, type, offset and size.
//
//   e_ident[16]  7f 'E' 'L' 'F', EI_CLASS (1 = 32-bit, 2 = 64-bit),
//                EI_DATA (1 = little-endian), EI_VERSION, EI_OSABI,
//                EI_ABIVERSION (8 = CUDA ABI v2 for cubins)
//   ELF64 header (64 bytes): e_machine u16 @18, e_shoff u64 @40,
//     e_flags u32 @48, e_shentsize u16 @58, e_shnum u16 @60, e_shstrndx u16 @62
//   ELF32 header (52 bytes): e_machine u16 @18, e_shoff u32 @32,
//     e_flags u32 @36, e_shentsize u16 @46, e_shnum u16 @48, e_shstrndx u16 @50
//   Section header, ELF64 (64 bytes): sh_name u32 @0, sh_type u32 @4,
//     sh_flags u64 @8, sh_offset u64 @24, sh_size u64 @32, sh_link u32 @40
//   Section header, ELF32 (40 bytes): sh_name @0, sh_type @4, sh_flags @8,
//     sh_offset u32 @16, sh_size u32 @20, sh_link u32 @24
//
// Extended numbering (gABI): a file with 0xff00 sections or more stores 0 in
// e_shnum and the real count in section 0's sh_size; likewise e_shstrndx is
// SHN_XINDEX (0xffff) and the real index is section 0's sh_link.
//
// e_version is deliberately not checked: older cubins carry toolkit numbers
// there (0x73..0x80, fatbin-format.md 3.1).
#include "orchestrator/inspect/elf.hpp"

#include <algorithm>

namespace orc::inspect {

namespace {

constexpr std::uint8_t k_class32 = 1;
constexpr std::uint8_t k_class64 = 2;
constexpr std::uint8_t k_data_le = 1;
constexpr std::uint8_t k_data_be = 2;
constexpr std::uint32_t k_sht_nobits = 8;
constexpr std::uint16_t k_shn_xindex = 0xffff;
constexpr std::uint64_t k_name_slack = 1 << 20;

// Where each field sits in one ELF class.
struct Layout {
  std::uint64_t header_size, shoff, shoff_width, flags, shentsize, shnum, shstrndx;
  std::uint64_t sh_min_size, sh_offset, sh_size, sh_link, sh_word_width;
};
constexpr Layout k_layout64{64, 40, 8, 48, 58, 60, 62, 64, 24, 32, 40, 8};
constexpr Layout k_layout32{52, 32, 4, 36, 46, 48, 50, 40, 16, 20, 24, 4};

// Reads a class-sized word (u32 in ELF32, u64 in ELF64).
std::optional<std::uint64_t> read_word(Bytes data, std::uint64_t offset, std::uint64_t width) {
  if (width == 4) return read_le<std::uint32_t>(data, offset);
  return read_le<std::uint64_t>(data, offset);
}

std::unexpected<ParseFailure> corrupt(std::uint64_t offset, std::string what) {
  return std::unexpected(ParseFailure{ParseFailure::Kind::corrupt, Damage{offset, std::move(what)}});
}

struct RawSection {
  std::uint32_t name = 0, type = 0, link = 0;
  std::uint64_t offset = 0, size = 0, flags = 0;
};

std::optional<RawSection> read_section_header(Bytes table_entry, const Layout& layout) {
  const auto name = read_le<std::uint32_t>(table_entry, 0);
  const auto type = read_le<std::uint32_t>(table_entry, 4);
  const auto offset = read_word(table_entry, layout.sh_offset, layout.sh_word_width);
  const auto size = read_word(table_entry, layout.sh_size, layout.sh_word_width);
  const auto link = read_le<std::uint32_t>(table_entry, layout.sh_link);
  if (!name || !type || !offset || !size || !link) return std::nullopt;
  // sh_flags follows sh_type in both classes, one class-sized word.
  const auto flags = read_word(table_entry, 8, layout.sh_word_width);
  if (!flags) return std::nullopt;
  return RawSection{*name, *type, *link, *offset, *size, *flags};
}

// The NUL-terminated name at `offset` in the section-name string table.
std::optional<std::string> section_name(Bytes strtab, std::uint32_t offset) {
  if (offset >= strtab.size()) return std::nullopt;
  const auto rest = strtab.subspan(offset);
  const auto nul = std::ranges::find(rest, std::byte{0});
  if (nul == rest.end()) return std::nullopt;
  return std::string(as_text(rest.first(static_cast<std::size_t>(nul - rest.begin()))));
}

}  // namespace

const Section* ElfFile::find(std::string_view name) const {
  const auto it = std::ranges::find(sections, name, &Section::name);
  return it == sections.end() ? nullptr : &*it;
}

std::expected<ElfFile, ParseFailure> parse_elf(Bytes data) {
  static constexpr std::byte k_magic[] = {std::byte{0x7f}, std::byte{'E'}, std::byte{'L'}, std::byte{'F'}};
  if (data.size() < 4 || !std::ranges::equal(data.first(4), k_magic))
    return std::unexpected(ParseFailure{ParseFailure::Kind::not_this_format, Damage{0, "not an ELF file"}});
  const auto elf_class = read_le<std::uint8_t>(data, 4);
  const auto encoding = read_le<std::uint8_t>(data, 5);
  const auto abi_version = read_le<std::uint8_t>(data, 8);
  if (!elf_class || !encoding || !abi_version) return corrupt(0, "ELF identification is truncated");
  if (*encoding == k_data_be) return corrupt(5, "big-endian ELF is not supported");
  if (*encoding != k_data_le) return corrupt(5, "unknown ELF data encoding " + std::to_string(*encoding));
  if (*elf_class != k_class32 && *elf_class != k_class64)
    return corrupt(4, "unknown ELF class " + std::to_string(*elf_class));

  const Layout& layout = *elf_class == k_class64 ? k_layout64 : k_layout32;
  if (data.size() < layout.header_size) return corrupt(0, "ELF header is truncated");
  ElfFile elf;
  elf.is64 = *elf_class == k_class64;
  elf.type = *read_le<std::uint16_t>(data, 16);
  elf.machine = *read_le<std::uint16_t>(data, 18);
  elf.abi_version = *abi_version;
  elf.flags = *read_le<std::uint32_t>(data, layout.flags);
  const std::uint64_t shoff = *read_word(data, layout.shoff, layout.shoff_width);
  const std::uint16_t shentsize = *read_le<std::uint16_t>(data, layout.shentsize);
  std::uint64_t shnum = *read_le<std::uint16_t>(data, layout.shnum);
  std::uint64_t shstrndx = *read_le<std::uint16_t>(data, layout.shstrndx);
  // No section table (e.g. sstrip'ed files): valid, just nothing to find.
  if (shoff == 0) return elf;

  if (shentsize < layout.sh_min_size)
    return corrupt(layout.shentsize, "section header size " + std::to_string(shentsize) + " is too small");
  const auto first = sub(data, shoff, shentsize);
  if (!first) return corrupt(layout.shoff, "section table at " + std::to_string(shoff) + " lies outside the file");
  const auto section0 = read_section_header(*first, layout);
  if (shnum == 0) shnum = section0->size;  // extended numbering
  if (shstrndx == k_shn_xindex) shstrndx = section0->link;
  if (shnum == 0) return elf;

  // Every entry must lie inside the file, which also bounds the count by the
  // file size before anything is allocated for it.
  const auto table_size = checked_mul(shnum, shentsize);
  if (!table_size || !sub(data, shoff, *table_size))
    return corrupt(layout.shoff, "section table (" + std::to_string(shnum) + " entries at " + std::to_string(shoff) +
                                     ") lies outside the file");
  if (shstrndx >= shnum)
    return corrupt(layout.shstrndx, "section name table index " + std::to_string(shstrndx) + " is out of range");

  std::vector<RawSection> raw;
  raw.reserve(static_cast<std::size_t>(shnum));
  for (std::uint64_t i = 0; i < shnum; ++i)
    raw.push_back(*read_section_header(*sub(data, shoff + i * shentsize, shentsize), layout));

  // shstrndx 0 (SHN_UNDEF) means the sections have no names.
  Bytes strtab;
  if (shstrndx != 0) {
    const RawSection& s = raw[static_cast<std::size_t>(shstrndx)];
    const auto bytes = s.type == k_sht_nobits ? std::optional<Bytes>(Bytes{}) : sub(data, s.offset, s.size);
    if (!bytes) return corrupt(shoff + shstrndx * shentsize, "section name table lies outside the file");
    strtab = *bytes;
  }

  // Names may share bytes of the table (".rela.text" ends in ".text"), so
  // copying them could cost sections x table size; real tables share a
  // little, and a file whose names add up to more than a few times its size
  // is built to exhaust memory.
  const std::uint64_t name_budget = 4 * std::uint64_t{data.size()} + k_name_slack;
  std::uint64_t name_bytes = 0;
  elf.sections.reserve(raw.size());
  for (std::uint64_t i = 0; i < raw.size(); ++i) {
    const RawSection& s = raw[static_cast<std::size_t>(i)];
    const std::uint64_t header_at = shoff + i * shentsize;
    Section section;
    if (shstrndx != 0) {
      auto name = section_name(strtab, s.name);
      if (!name) return corrupt(header_at, "name of section " + std::to_string(i) + " lies outside the name table");
      name_bytes += name->size();
      if (name_bytes > name_budget) return corrupt(header_at, "section names overlap beyond any real name table");
      section.name = std::move(*name);
    }
    section.type = s.type;
    section.link = s.link;
    section.flags = s.flags;
    section.offset = s.offset;
    // SHT_NOBITS occupies no file bytes; section 0 (SHT_NULL) may carry the
    // extended section count in sh_size, which is not a file range.
    const bool in_file = s.type != k_sht_nobits && s.type != 0;
    section.size = in_file ? s.size : 0;
    if (in_file && !sub(data, s.offset, s.size))
      return corrupt(header_at, "section " + std::to_string(i) + " '" + section.name + "' lies outside the file");
    elf.sections.push_back(std::move(section));
  }
  return elf;
}

namespace {

constexpr std::uint32_t k_sht_symtab = 2;
constexpr std::uint32_t k_sht_dynamic = 6;
constexpr std::uint32_t k_sht_dynsym = 11;
constexpr std::uint64_t k_dt_null = 0;
constexpr std::uint32_t k_sht_strtab = 3;
constexpr std::uint64_t k_dt_needed = 1;
constexpr std::uint64_t k_dt_soname = 14;
constexpr std::uint8_t k_stt_func = 2;
constexpr std::uint8_t k_sto_cuda_entry = 0x10;

// The string table a section links to, or an empty span.
Bytes linked_strings(Bytes data, const ElfFile& elf, const Section& section) {
  if (section.link >= elf.sections.size()) return {};
  const Section& strings = elf.sections[section.link];
  return sub(data, strings.offset, strings.size).value_or(Bytes{});
}

// Names copied out of a string table are bounded: one name at most this
// long, all names of one call at most this many bytes, so a table whose
// entries all point at one long string cannot make copies of it without end.
constexpr std::size_t k_max_name = 4096;
constexpr std::size_t k_max_names_bytes = 16u << 20;

class NameBudget {
 public:
  // The name at `offset`, or nullopt when it is missing, too long or over budget.
  std::optional<std::string> take(Bytes strings, std::uint64_t offset) {
    if (offset >= strings.size()) return std::nullopt;
    const auto rest = strings.subspan(static_cast<std::size_t>(offset));
    const auto nul = std::ranges::find(rest.first(std::min(rest.size(), k_max_name + 1)), std::byte{0});
    const auto length = static_cast<std::size_t>(nul - rest.begin());
    if (length > k_max_name || nul == rest.end() || m_used + length > k_max_names_bytes) return std::nullopt;
    m_used += length;
    return std::string(as_text(rest.first(length)));
  }

 private:
  std::size_t m_used = 0;
};

}  // namespace

// Dynamic entries: ELF64 {i64 d_tag, u64 d_val} (16 bytes), ELF32 {i32, u32}
// (8 bytes), up to DT_NULL; DT_NEEDED's and DT_SONAME's d_val is an offset
// into the string table the section's sh_link names (.dynstr, SHT_STRTAB).
// The loader reads the same names through PT_DYNAMIC and DT_STRTAB; a file
// stripped of its section table (sstrip) is read as having none.
DynamicInfo read_dynamic(Bytes data, const ElfFile& elf) {
  DynamicInfo out;
  const std::uint64_t width = elf.is64 ? 8 : 4;
  const auto damaged = [&](std::uint64_t offset, std::string what) {
    if (!out.damage) out.damage = Damage{offset, std::move(what)};
  };
  for (const Section& section : elf.sections) {
    if (section.type != k_sht_dynamic) continue;
    // parse_elf keeps only sections that lie inside the file.
    const Bytes table = sub(data, section.offset, section.size).value_or(Bytes{});
    if (section.link >= elf.sections.size() || elf.sections[section.link].type != k_sht_strtab) {
      damaged(section.offset,
              "dynamic section links to section " + std::to_string(section.link) + ", which is no string table");
      continue;
    }
    const Bytes strings = linked_strings(data, elf, section);
    NameBudget budget;
    std::uint64_t at = 0;
    for (; at + 2 * width <= table.size(); at += 2 * width) {
      const std::uint64_t tag = *read_word(table, at, width);
      const std::uint64_t value = *read_word(table, at + width, width);
      if (tag == k_dt_null) break;
      if (tag != k_dt_needed && tag != k_dt_soname) continue;
      auto name = budget.take(strings, value);
      if (!name) {
        damaged(section.offset + at, std::string(tag == k_dt_needed ? "DT_NEEDED" : "DT_SONAME") + " name at " +
                                         std::to_string(value) + " is not a string of the string table (" +
                                         std::to_string(strings.size()) + " bytes)");
        continue;
      }
      if (tag == k_dt_needed)
        out.needed.push_back(std::move(*name));
      else
        out.soname = std::move(*name);
    }
    if (at + 2 * width > table.size() && at != table.size())
      damaged(section.offset + at, "dynamic section ends inside an entry (" + std::to_string(table.size()) +
                                       " bytes, entries of " + std::to_string(2 * width) + ")");
  }
  return out;
}

// Undefined symbols of .dynsym (st_shndx 0, SHN_UNDEF), by name.
std::vector<std::string> imported_symbols(Bytes data, const ElfFile& elf) {
  std::vector<std::string> out;
  const std::uint64_t size = elf.is64 ? 24 : 16;
  const std::uint64_t shndx_at = elf.is64 ? 6 : 14;
  for (const Section& section : elf.sections) {
    if (section.type != k_sht_dynsym) continue;
    const auto table = sub(data, section.offset, section.size);
    if (!table) continue;
    const Bytes strings = linked_strings(data, elf, section);
    NameBudget budget;
    for (std::uint64_t at = size; at + size <= table->size(); at += size) {
      const std::uint32_t name = *read_le<std::uint32_t>(*table, at);
      if (name == 0 || *read_le<std::uint16_t>(*table, at + shndx_at) != 0) continue;
      if (auto text = budget.take(strings, name)) out.push_back(std::move(*text));
    }
  }
  return out;
}

// Symbols: ELF64 {u32 name, u8 info, u8 other, u16 shndx, u64 value, u64
// size} (24 bytes), ELF32 {u32 name, u32 value, u32 size, u8 info, u8 other,
// u16 shndx} (16 bytes). STT_FUNC is info & 0xf == 2. ptxas sets st_other
// 0x10 on __global__ functions only (readelf shows "[<other>: 10]"; seen in
// nvcc 11.8, 12.4 and 13.0 cubins; __device__ functions have 0).
std::optional<std::vector<std::string>> cubin_entries(Bytes cubin) {
  const auto elf = parse_elf(cubin);
  if (!elf) return std::nullopt;
  const std::uint64_t size = elf->is64 ? 24 : 16;
  const std::uint64_t info_at = elf->is64 ? 4 : 12;
  bool any_table = false;
  std::vector<std::string> names;
  NameBudget budget;
  for (const Section& section : elf->sections) {
    if (section.type != k_sht_symtab) continue;
    const auto table = sub(cubin, section.offset, section.size);
    if (!table) continue;
    any_table = true;
    const Bytes strings = linked_strings(cubin, *elf, section);
    for (std::uint64_t at = 0; at + size <= table->size(); at += size) {
      const std::uint8_t info = *read_le<std::uint8_t>(*table, at + info_at);
      const std::uint8_t other = *read_le<std::uint8_t>(*table, at + info_at + 1);
      if ((info & 0xf) != k_stt_func || !(other & k_sto_cuda_entry)) continue;
      // A kernel whose name cannot be read still counts as a kernel.
      names.push_back(budget.take(strings, *read_le<std::uint32_t>(*table, at)).value_or(std::string()));
    }
  }
  if (!any_table) return std::nullopt;
  std::ranges::sort(names);
  return names;
}

std::optional<bool> cubin_has_entry(Bytes cubin) {
  const auto entries = cubin_entries(cubin);
  if (!entries) return std::nullopt;
  return !entries->empty();
}

}  // namespace orc::inspect
