#pragma once
// Inputs the inspect reader tests share: byte-by-byte builders for fatbin
// containers, ELF files, cubins and ar archives (so each test states the
// bytes it is about), and real nvcc 13.0 outputs built once per test run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/inspect/bytes.hpp"

namespace orc::inspect::testing {

using Buffer = std::vector<std::byte>;

// Appends little-endian values; patches them in place afterwards.
class ByteWriter {
 public:
  ByteWriter& u8(std::uint64_t v) { return put(v, 1); }
  ByteWriter& u16(std::uint64_t v) { return put(v, 2); }
  ByteWriter& u32(std::uint64_t v) { return put(v, 4); }
  ByteWriter& u64(std::uint64_t v) { return put(v, 8); }
  ByteWriter& bytes(Bytes b) {
    m_data.insert(m_data.end(), b.begin(), b.end());
    return *this;
  }
  ByteWriter& text(std::string_view s) { return bytes(as_bytes(s)); }
  ByteWriter& zeros(std::size_t n) {
    m_data.resize(m_data.size() + n);
    return *this;
  }
  ByteWriter& align(std::size_t n) { return zeros((n - m_data.size() % n) % n); }
  void patch(std::size_t at, std::uint64_t v, std::size_t width) {
    for (std::size_t i = 0; i < width; ++i) m_data.at(at + i) = std::byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  // A zstd block header: 3 bytes, last-block bit, 2-bit type, 21-bit size.
  ByteWriter& put_block_header(std::size_t size, unsigned type, bool last) {
    return put((static_cast<std::uint64_t>(size) << 3) | (type << 1) | (last ? 1u : 0u), 3);
  }
  std::size_t size() const { return m_data.size(); }
  const Buffer& data() const { return m_data; }

 private:
  ByteWriter& put(std::uint64_t v, std::size_t width) {
    for (std::size_t i = 0; i < width; ++i) m_data.push_back(std::byte(static_cast<std::uint8_t>(v >> (8 * i))));
    return *this;
  }
  Buffer m_data;
};

inline Buffer concat(std::initializer_list<Buffer> parts) {
  Buffer out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Overwrites `width` bytes at `at` with `v`, little-endian (to damage or
// re-label real files the way the spec's byte-patched probes did).
inline void patch_le(Buffer& b, std::size_t at, std::uint64_t v, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) b.at(at + i) = std::byte(static_cast<std::uint8_t>(v >> (8 * i)));
}

inline Buffer bytes_of(std::string_view s) {
  const auto b = as_bytes(s);
  return {b.begin(), b.end()};
}

// One fatbin entry (fatbin-format.md 2.2/2.3). header_size and payload_size
// are computed unless forced, so tests can write inconsistent headers.
struct EntrySpec {
  std::uint16_t kind = 2;
  std::uint32_t arch = 80;
  std::uint64_t flags = 0x11;
  Buffer payload;
  std::string identifier;
  std::uint32_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
  std::optional<std::uint32_t> header_size;
  std::optional<std::uint64_t> payload_size;
  std::optional<std::uint32_t> ident_off;
};

inline Buffer fatbin_entry(const EntrySpec& spec) {
  ByteWriter tail;  // the variable part after the fixed 64 bytes
  if (!spec.identifier.empty()) tail.text(spec.identifier).u8(0).align(8);
  const std::uint32_t header_size = spec.header_size.value_or(static_cast<std::uint32_t>(64 + tail.size()));
  ByteWriter payload;
  payload.bytes(spec.payload).align(8);
  ByteWriter w;
  w.u16(spec.kind).u16(0x0101).u32(header_size).u64(spec.payload_size.value_or(payload.size()));
  w.u32(spec.compressed_size).u32(0).u16(0).u16(1).u32(spec.arch);
  w.u32(spec.identifier.empty() ? spec.ident_off.value_or(0) : spec.ident_off.value_or(64));
  w.u32(static_cast<std::uint32_t>(spec.identifier.size()));
  w.u64(spec.flags).u64(0).u64(spec.uncompressed_size).bytes(tail.data());
  // A forced header size changes where the payload starts; keep the bytes in order.
  w.bytes(payload.data());
  return w.data();
}

inline Buffer fatbin_container(const std::vector<Buffer>& entries, std::optional<std::uint64_t> fat_size = {}) {
  Buffer body;
  for (const auto& e : entries) body.insert(body.end(), e.begin(), e.end());
  ByteWriter w;
  w.u32(0xBA55ED50u).u16(1).u16(16).u64(fat_size.value_or(body.size())).bytes(body);
  return w.data();
}

// An ELF file: header, section data, name table, section table (section 0
// is SHT_NULL and the name table comes last).
struct SectionSpec {
  std::string name;
  std::uint32_t type = 1;  // SHT_PROGBITS
  Buffer data;
  std::uint32_t link = 0;  // sh_link: a dynamic section's string table
};

struct ElfSpec {
  bool is64 = true;
  std::uint16_t machine = 62;  // x86-64
  std::uint8_t abi_version = 0;
  std::uint32_t flags = 0;
  std::vector<SectionSpec> sections;
};

// Offsets of interesting fields in what build_elf wrote, for patching.
struct ElfLayout {
  std::size_t shoff_field = 0, shnum_field = 0, shstrndx_field = 0, shoff = 0, shentsize = 0;
};

inline Buffer build_elf(const ElfSpec& spec, ElfLayout* layout = nullptr) {
  const std::size_t ehsize = spec.is64 ? 64 : 52, shentsize = spec.is64 ? 64 : 40;
  ByteWriter w;
  w.zeros(ehsize);
  std::vector<std::size_t> offsets;
  for (const auto& s : spec.sections) {
    w.align(8);
    offsets.push_back(w.size());
    if (s.type != 8) w.bytes(s.data);  // SHT_NOBITS has no file bytes
  }
  ByteWriter names;
  names.u8(0);
  std::vector<std::size_t> name_at;
  for (const auto& s : spec.sections) name_at.push_back(names.size()), names.text(s.name).u8(0);
  const std::size_t shstrtab_name = names.size();
  names.text(".shstrtab").u8(0);
  const std::size_t strtab_at = w.size();
  w.bytes(names.data()).align(8);
  const std::size_t shoff = w.size();
  const std::size_t count = spec.sections.size() + 2;
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t name = 0, off = 0, size = 0;
    std::uint32_t type = 0, link = 0;
    if (i > 0 && i <= spec.sections.size()) {
      const auto& s = spec.sections[i - 1];
      name = name_at[i - 1], type = s.type, off = offsets[i - 1], size = s.data.size(), link = s.link;
    } else if (i == count - 1) {
      name = shstrtab_name, type = 3, off = strtab_at, size = names.size();
    }
    w.u32(name).u32(type);
    if (spec.is64) {
      w.u64(0).u64(0).u64(off).u64(size).u32(link).u32(0).u64(1).u64(0);
    } else {
      w.u32(0).u32(0).u32(off).u32(size).u32(link).u32(0).u32(1).u32(0);
    }
  }
  w.patch(0, 0x464c457f, 4);  // 7f 'E' 'L' 'F'
  w.patch(4, spec.is64 ? 2 : 1, 1);
  w.patch(5, 1, 1);  // little-endian
  w.patch(6, 1, 1);  // EI_VERSION
  w.patch(8, spec.abi_version, 1);
  w.patch(16, 1, 2);  // ET_REL
  w.patch(18, spec.machine, 2);
  w.patch(20, 1, 4);
  ElfLayout l;
  if (spec.is64) {
    l = {40, 60, 62, shoff, shentsize};
    w.patch(40, shoff, 8);
    w.patch(48, spec.flags, 4);
    w.patch(52, ehsize, 2);
    w.patch(58, shentsize, 2);
  } else {
    l = {32, 48, 50, shoff, shentsize};
    w.patch(32, shoff, 4);
    w.patch(36, spec.flags, 4);
    w.patch(40, ehsize, 2);
    w.patch(46, shentsize, 2);
  }
  w.patch(l.shnum_field, count, 2);
  w.patch(l.shstrndx_field, count - 1, 2);
  if (layout) *layout = l;
  return w.data();
}

// .nv.compat records as ptxas 13.0 writes them (fatbin-format.md 3.4), with
// attribute 9 (the 'a' of sm_90a) set as asked.
inline Buffer compat_records(bool arch_specific) {
  ByteWriter w;
  w.u8(2).u8(0x09).u8(arch_specific ? 1 : 0).u8(0);  // BVAL accelerator target
  w.u8(2).u8(0x02).u8(1).u8(0);                      // BVAL
  w.u8(3).u8(0x07).u16(0x0101);                      // HVAL
  w.u8(4).u8(0x0b).u16(8).u64(9);                    // SVAL of 8 bytes
  return w.data();
}

inline constexpr std::uint32_t k_sht_cuda_compat = 0x70000086;

// A cubin: e_flags laid out for `abi_version` (7: SM in the low byte and
// 0x800 for 'a'; 8: SM in bits 8-15, 'a' only in .nv.compat).
inline Buffer build_cubin(int sm, bool arch_specific, std::uint8_t abi_version = 8) {
  ElfSpec spec;
  spec.machine = 190;
  spec.abi_version = abi_version;
  const auto usm = static_cast<std::uint32_t>(sm);
  spec.flags = abi_version >= 8 ? 0x06000004u | (usm << 8) : (usm << 16) | 0x500u | usm | (arch_specific ? 0x800u : 0u);
  spec.sections.push_back({".text.add", 1, Buffer(32, std::byte{0x11})});
  if (abi_version >= 8) spec.sections.push_back({".nv.compat", k_sht_cuda_compat, compat_records(arch_specific)});
  spec.sections.push_back({".bss", 8, Buffer(16)});
  return build_elf(spec);
}

// An ar member header: name[16] date[12] uid[6] gid[6] mode[8] size[10] "`\n".
inline std::string ar_header(std::string_view name, std::uint64_t size) {
  const auto field = [](std::string v, std::size_t width) {
    v.resize(width, ' ');
    return v;
  };
  return field(std::string(name), 16) + field("0", 12) + field("0", 6) + field("0", 6) + field("644", 8) +
         field(std::to_string(size), 10) + "`\n";
}

struct ArEntry {
  std::string name;
  Buffer data;
};

// A GNU archive: a "/" symbol table, a "//" name table for names of 16
// characters or more, then the members, each padded to an even offset.
inline Buffer gnu_ar(const std::vector<ArEntry>& members) {
  std::string long_names;
  std::vector<std::string> field_names;
  for (const auto& m : members) {
    if (m.name.size() >= 16) {
      field_names.push_back("/" + std::to_string(long_names.size()));
      long_names += m.name + "/\n";
    } else {
      field_names.push_back(m.name + "/");
    }
  }
  ByteWriter w;
  w.text("!<arch>\n");
  const auto member = [&w](std::string_view name, const Buffer& data) {
    w.text(ar_header(name, data.size())).bytes(data);
    if (data.size() % 2) w.text("\n");
  };
  member("/", Buffer(8));  // an empty symbol table: count 0 (big-endian u32) and padding
  if (!long_names.empty()) member("//", bytes_of(long_names));
  for (std::size_t i = 0; i < members.size(); ++i) member(field_names[i], members[i].data);
  return w.data();
}

// A BSD archive: every name as "#1/len" with the name bytes NUL-padded at
// the start of the data, after a "__.SYMDEF SORTED" symbol table.
inline Buffer bsd_ar(const std::vector<ArEntry>& members) {
  ByteWriter w;
  w.text("!<arch>\n");
  const auto member = [&w](std::string name, const Buffer& data) {
    name.resize((name.size() + 7) / 8 * 8, '\0');
    w.text(ar_header("#1/" + std::to_string(name.size()), name.size() + data.size())).text(name).bytes(data);
    if ((name.size() + data.size()) % 2) w.text("\n");
  };
  member("__.SYMDEF SORTED", Buffer(8));
  for (const auto& m : members) member(m.name, m.data);
  return w.data();
}

// A zstd frame of raw (stored) blocks, with or without a content size in
// its header (RFC 8878: frame header descriptor 0xE0 = single segment with
// an 8-byte size; 0x00 plus window descriptor 0x38 = 128 KiB window, no size).
inline Buffer zstd_stored_frame(Bytes content, bool declare_size = true) {
  constexpr std::size_t k_block_max = 128 * 1024;
  ByteWriter w;
  w.u32(0xFD2FB528u);
  if (declare_size)
    w.u8(0xE0).u64(content.size());
  else
    w.u8(0x00).u8(0x38);
  std::size_t at = 0;
  do {
    const std::size_t n = std::min(k_block_max, content.size() - at);
    const bool last = at + n == content.size();
    w.put_block_header(n, 0, last).bytes(content.subspan(at, n));
    at += n;
  } while (at < content.size());
  return w.data();
}

// An LZ4 block of literals only (the format's simplest valid block).
inline Buffer lz4_literal_block(Bytes content) {
  ByteWriter w;
  const std::size_t n = content.size();
  w.u8((n >= 15 ? 15 : n) << 4);
  if (n >= 15) {
    std::size_t rest = n - 15;
    for (; rest >= 255; rest -= 255) w.u8(255);
    w.u8(rest);
  }
  w.bytes(content);
  return w.data();
}

// One ustar member (POSIX.1-1988): a 512-byte header holding the name's
// bytes as they are (none of pax's UTF-8), then the data padded to 512.
inline Buffer ustar_member(std::string_view name, Bytes data) {
  std::string h(512, '\0');
  name.substr(0, 100).copy(h.data(), 100);
  const auto octal = [&h](std::size_t at, std::size_t width, std::uint64_t v) {
    std::snprintf(h.data() + at, width, "%0*llo", static_cast<int>(width - 1), static_cast<unsigned long long>(v));
  };
  octal(100, 8, 0644), octal(108, 8, 0), octal(116, 8, 0), octal(124, 12, data.size()), octal(136, 12, 0);
  h[156] = '0';  // a regular file
  std::string_view(
      "ustar\0"
      "00")
      .copy(h.data() + 257, 8);
  std::fill(h.begin() + 148, h.begin() + 156, ' ');  // the checksum counts its own field as spaces
  unsigned sum = 0;
  for (const char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h.data() + 148, 8, "%06o", sum);
  h[155] = ' ';
  ByteWriter w;
  w.text(h).bytes(data).zeros((512 - data.size() % 512) % 512);
  return w.data();
}

inline Buffer read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes_of(text);
}

}  // namespace orc::inspect::testing
