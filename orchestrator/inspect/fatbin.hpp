#pragma once
// Fatbin containers (magic 0xBA55ED50) and their entries.
#include <cstdint>
#include <optional>
#include <vector>

#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/model.hpp"

namespace orc::inspect {

inline constexpr std::uint32_t k_fatbin_magic = 0xBA55ED50u;

struct ScanOptions {
  // Name compressed ELF entries from the decompressed cubin, as cuobjdump
  // does, instead of from the entry header (which agrees for everything the
  // toolchain produces). Costs a full decompression per compressed cubin.
  bool exact = false;
};

struct FatbinScan {
  std::vector<Entry> entries;    // in file order
  std::size_t containers = 0;
  std::optional<Damage> damage;  // set when the walk stopped at damage
};

// Walks the containers back to back in data[begin, end): zero padding between
// containers is skipped in 8-byte steps, anything else is damage. Entry
// offsets are relative to `data`. Never throws; never reads outside `data`.
// Damage offsets (also relative to `data`) point at the junk, the container
// header, or the offending field of an entry header (header_size at +4,
// payload_size at +8, compressed_size at +0x10, identifier at +0x20). A
// container cut short lists none of its entries, as cuobjdump lists none.
FatbinScan scan_fatbins(Bytes data, std::uint64_t begin, std::uint64_t end, const ScanOptions& options = {});

}  // namespace orc::inspect
