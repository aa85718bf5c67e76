// Fatbin containers and entries (fatbin-format.md 2).
//
// Container header, 16 bytes (8-aligned):
//   u32 magic 0xBA55ED50 | u16 version (1) | u16 header_size (16) | u64 fat_size
// followed by fat_size bytes of entries; containers sit back to back, maybe
// with zero padding between them (a linker aligning input sections).
//
// Entry header, header_size bytes (>= 64, a multiple of 8):
//   0x00 u16 kind (1 PTX, 2 ELF, 8 LTO-IR)   0x02 u16 version (0x0101)
//   0x04 u32 header_size                     0x08 u64 payload_size (padded)
//   0x10 u32 compressed_size                 0x14 u32 aux descriptor offset
//   0x18 u16 code minor, 0x1A u16 code major 0x1C u32 arch (75, 90, 100, ...)
//   0x20 u32 identifier offset               0x24 u32 identifier length
//   0x28 u64 flags                           0x30 u64 reserved
//   0x38 u64 uncompressed_size
//   0x40.. variable tail: identifier, aux descriptor and what it points to
// The payload follows the header; the next entry follows the payload. Only
// header_size locates the payload: headers of 64..128 bytes exist.
//
// flags: 0x2000 LZ4 block, 0x8000 zstd frame, 0x1000 legacy compression
// (codec unknown); 0x100000 'a' (arch-specific), 0x200000 'f' (family).
#include "orchestrator/inspect/fatbin.hpp"

#include <algorithm>

#include "orchestrator/inspect/decompress.hpp"
#include "orchestrator/inspect/elf.hpp"

namespace orc::inspect {

namespace {

using arch::ComputeCapability;
using arch::Variant;

constexpr std::uint64_t k_container_header_size = 16;
constexpr std::uint64_t k_entry_min_header_size = 64;
constexpr std::uint64_t k_padding_step = 8;

constexpr std::uint64_t k_flag_compress_legacy = 0x1000;
constexpr std::uint64_t k_flag_lz4 = 0x2000;
constexpr std::uint64_t k_flag_zstd = 0x8000;
constexpr std::uint64_t k_flag_arch_specific = 0x100000;
constexpr std::uint64_t k_flag_family = 0x200000;

EntryKind kind_of(std::uint16_t raw) {
  switch (raw) {
    case 1:
      return EntryKind::ptx;
    case 2:
      return EntryKind::elf;
    case 8:
      return EntryKind::lto_ir;
    default:
      return EntryKind::unknown;
  }
}

Compression compression_of(std::uint64_t flags) {
  if (flags & k_flag_zstd) return Compression::zstd;
  if (flags & k_flag_lz4) return Compression::lz4;
  if (flags & k_flag_compress_legacy) return Compression::other;
  return Compression::none;
}

ComputeCapability cc_of(std::uint64_t number, Variant variant) {
  return {static_cast<int>(number / 10), static_cast<int>(number % 10), variant};
}

ComputeCapability header_arch_of(std::uint32_t arch, std::uint64_t flags) {
  const Variant variant = (flags & k_flag_arch_specific) ? Variant::arch_specific
                          : (flags & k_flag_family)      ? Variant::family
                                                         : Variant::none;
  return cc_of(arch, variant);
}

// The cubin of an ELF entry, decompressed when needed; nullopt when it is
// compressed and the caller did not ask for exactness, or it cannot be had.
std::optional<std::vector<std::byte>> decompressed(const Entry& entry, Bytes payload) {
  const auto stream = sub(payload, 0, entry.compressed_size);
  if (!stream || entry.uncompressed_size == 0) return std::nullopt;
  // The legacy 0x1000 codec is undocumented: such cubins keep the header's name.
  if (entry.compression != Compression::lz4 && entry.compression != Compression::zstd) return std::nullopt;
  auto out = entry.compression == Compression::lz4 ? decompress_lz4_block(*stream, entry.uncompressed_size)
                                                   : decompress_zstd(*stream, entry.uncompressed_size);
  if (!out) return std::nullopt;
  return std::move(*out);
}

// Names an ELF entry as cuobjdump does: from the cubin's e_flags and
// .nv.compat, else from the header with 'f' dropped (a cubin cannot say 'f').
void name_elf(Entry& entry, Bytes payload, const ScanOptions& options) {
  std::optional<CubinArch> from_cubin;
  if (entry.compression == Compression::none) {
    if (auto a = cubin_arch(payload)) from_cubin = *a;
  } else if (options.exact) {
    if (const auto cubin = decompressed(entry, payload))
      if (auto a = cubin_arch(*cubin)) from_cubin = *a;
  }
  if (from_cubin) {
    entry.arch = cc_of(static_cast<std::uint64_t>(from_cubin->sm),
                       from_cubin->arch_specific ? Variant::arch_specific : Variant::none);
    entry.arch_from_cubin = true;
  } else {
    const Variant variant =
        entry.header_arch.variant() == Variant::family ? Variant::none : entry.header_arch.variant();
    entry.arch = entry.header_arch.with(variant);
  }
}

// Reads the entry at `at` of a container ending at `end`. Returns the entry
// or the damage that stops the walk.
std::expected<Entry, Damage> read_entry(Bytes data, std::uint64_t at, std::uint64_t end, const ScanOptions& options) {
  const auto header = sub(data, at, k_entry_min_header_size);
  if (!header || end - at < k_entry_min_header_size)
    return std::unexpected(Damage{at, "truncated fatbin entry header"});
  Entry entry;
  entry.offset = at;
  entry.raw_kind = *read_le<std::uint16_t>(*header, 0x00);
  entry.kind = kind_of(entry.raw_kind);
  entry.header_size = *read_le<std::uint32_t>(*header, 0x04);
  entry.payload_size = *read_le<std::uint64_t>(*header, 0x08);
  const std::uint32_t compressed_size = *read_le<std::uint32_t>(*header, 0x10);
  const std::uint32_t arch_number = *read_le<std::uint32_t>(*header, 0x1C);
  const std::uint32_t ident_off = *read_le<std::uint32_t>(*header, 0x20);
  const std::uint32_t ident_len = *read_le<std::uint32_t>(*header, 0x24);
  entry.flags = *read_le<std::uint64_t>(*header, 0x28);
  entry.code_minor = *read_le<std::uint16_t>(*header, 0x18);
  entry.code_major = *read_le<std::uint16_t>(*header, 0x1A);
  const std::uint64_t uncompressed_size = *read_le<std::uint64_t>(*header, 0x38);

  if (entry.header_size < k_entry_min_header_size || entry.header_size % 8 != 0)
    return std::unexpected(Damage{at + 0x04, "invalid fatbin entry header size " + std::to_string(entry.header_size)});
  const auto entry_size = checked_add(entry.header_size, entry.payload_size);
  if (!entry_size || *entry_size > end - at)
    return std::unexpected(Damage{at + 0x08, "fatbin entry payload runs past the end of its container"});

  entry.compression = compression_of(entry.flags);
  if (entry.compression != Compression::none) {
    entry.compressed_size = compressed_size;
    entry.uncompressed_size = uncompressed_size;
    if (compressed_size > entry.payload_size)
      return std::unexpected(Damage{at + 0x10, "fatbin entry compressed size exceeds its payload"});
  }
  if (ident_off != 0) {
    const auto ident_end = checked_add(ident_off, ident_len);
    if (!ident_end || *ident_end > entry.header_size)
      return std::unexpected(Damage{at + 0x20, "fatbin entry identifier lies outside its header"});
    const std::string_view ident = as_text(*sub(data, at + ident_off, ident_len));
    entry.identifier = ident.substr(0, ident.find('\0'));
  }

  entry.header_arch = header_arch_of(arch_number, entry.flags);
  entry.arch = entry.header_arch;
  if (entry.kind == EntryKind::elf) name_elf(entry, *sub(data, at + entry.header_size, entry.payload_size), options);
  return entry;
}

bool all_zero(Bytes bytes) {
  return std::ranges::all_of(bytes, [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

std::optional<Bytes> entry_image(Bytes data, const Entry& entry, std::vector<std::byte>& storage) {
  const auto payload = sub(data, entry.offset + entry.header_size, entry.payload_size);
  if (!payload) return std::nullopt;
  if (entry.compression == Compression::none) return *payload;
  auto out = decompressed(entry, *payload);
  if (!out) return std::nullopt;
  storage = std::move(*out);
  return Bytes(storage);
}

FatbinScan scan_fatbins(Bytes data, std::uint64_t begin, std::uint64_t end, const ScanOptions& options) {
  FatbinScan scan;
  if (begin > end || end > data.size()) {
    scan.damage = Damage{begin, "fatbin range lies outside the data"};
    return scan;
  }
  std::uint64_t at = begin;
  while (at < end) {
    const auto magic = read_le<std::uint32_t>(data, at);
    if (!magic || *magic != k_fatbin_magic || end - at < k_container_header_size) {
      // Zero padding between containers is skipped 8 bytes at a time, as
      // cuobjdump does; anything else is not a fatbin (cuobjdump: "Invalid
      // fatbin header"), and neither is a container header cut short.
      const std::uint64_t step = std::min(k_padding_step, end - at);
      if (all_zero(*sub(data, at, step))) {
        at += step;
        continue;
      }
      scan.damage = Damage{at, "invalid fatbin header"};
      return scan;
    }
    const std::uint64_t header_size = *read_le<std::uint16_t>(data, at + 6);
    const std::uint64_t fat_size = *read_le<std::uint64_t>(data, at + 8);
    if (header_size < k_container_header_size) {
      scan.damage = Damage{at, "invalid fatbin header (header size " + std::to_string(header_size) + ")"};
      return scan;
    }
    const auto container_size = checked_add(header_size, fat_size);
    if (!container_size || *container_size > end - at) {
      // Entries of a cut-off container are not listed: cuobjdump lists none.
      scan.damage =
          Damage{at, "truncated fatbin container (" + std::to_string(fat_size) + " bytes of entries declared, " +
                         std::to_string(end - at - std::min(end - at, header_size)) + " present)"};
      return scan;
    }
    ++scan.containers;
    const std::uint64_t container_end = at + *container_size;
    Container span{.offset = at, .size = *container_size, .first_entry = scan.entries.size(), .entry_count = 0};
    // Each step advances by at least 64 bytes (the minimum header size).
    for (std::uint64_t entry_at = at + header_size; entry_at < container_end;) {
      auto entry = read_entry(data, entry_at, container_end, options);
      if (!entry) {
        // The entries before the damage keep a container to belong to.
        span.entry_count = scan.entries.size() - span.first_entry;
        scan.spans.push_back(span);
        scan.damage = std::move(entry.error());
        return scan;
      }
      entry_at += entry->header_size + entry->payload_size;
      entry->container = scan.spans.size();
      scan.entries.push_back(std::move(*entry));
    }
    span.entry_count = scan.entries.size() - span.first_entry;
    scan.spans.push_back(span);
    at = container_end;
  }
  return scan;
}

}  // namespace orc::inspect
