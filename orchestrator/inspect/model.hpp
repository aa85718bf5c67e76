#pragma once
// What the inspector finds in a file: fatbin entries (SASS cubins, PTX,
// LTO-IR) and where they are. The formats are documented where they are
// parsed (fatbin.cpp, elf.cpp, cubin.cpp, ar.cpp); the facts come from
// ../shared/reference/fatbin-format.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"

namespace orc::inspect {

enum class EntryKind { elf, ptx, lto_ir, unknown };
enum class Compression { none, lz4, zstd, other };

struct Entry {
  EntryKind kind = EntryKind::unknown;
  std::uint16_t raw_kind = 0;
  // The arch as cuobjdump names it: ELF "sm_XX" or "sm_XXa" (never 'f',
  // which a cubin does not record); PTX from the header, with 'a' or 'f'.
  arch::ComputeCapability arch;
  // The arch the entry header claims, with 'a'/'f' from its flags.
  arch::ComputeCapability header_arch;
  bool arch_from_cubin = false;  // ELF: named from the cubin itself (e_flags, .nv.compat)
  std::string identifier;        // empty when the header has none
  Compression compression = Compression::none;
  std::uint64_t offset = 0;  // of the entry header, from the start of the buffer walked
  std::uint64_t header_size = 0;
  std::uint64_t payload_size = 0;       // padded payload bytes after the header
  std::uint64_t compressed_size = 0;    // 0 when not compressed
  std::uint64_t uncompressed_size = 0;  // 0 when not compressed
  std::uint64_t flags = 0;
  // Header +0x1A/+0x18: for PTX the PTX ISA version (`.version 9.0` is 9, 0);
  // for ELF the cubin format ([1,8] in 13.0), for LTO-IR the NVVM IR's.
  std::uint16_t code_major = 0;
  std::uint16_t code_minor = 0;
  std::size_t container = 0;  // index of its container in the walk
};

// Damage found while reading: where, and what was wrong. Everything read
// before it stays valid (cuobjdump lists what came before the damage, too).
struct Damage {
  std::uint64_t offset = 0;
  std::string what;
};

// Result of a parse that can fail two ways: the bytes are not this format at
// all, or they are this format and corrupt.
struct ParseFailure {
  enum class Kind { not_this_format, corrupt };
  Kind kind = Kind::corrupt;
  Damage damage;
};

}  // namespace orc::inspect
