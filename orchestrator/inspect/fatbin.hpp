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

// One container of a walk: its bytes and its entries. nvcc writes one per
// translation unit, and one for the device link; the runtime registers each
// as a module of its own.
struct Container {
  std::uint64_t offset = 0;  // of the container header, from the start of the buffer walked
  std::uint64_t size = 0;    // header and entries
  std::size_t first_entry = 0;
  std::size_t entry_count = 0;
};

struct FatbinScan {
  std::vector<Entry> entries;  // in file order
  std::size_t containers = 0;
  std::vector<Container> spans;  // every container with its entries, in file order (the last cut at damage)
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

// The image an entry carries, as the driver reads it: a view of `data` when
// stored plain, else decompressed into `storage` (LZ4 or zstd). nullopt when
// it cannot be had (the legacy codec, a stream that does not decode).
std::optional<Bytes> entry_image(Bytes data, const Entry& entry, std::vector<std::byte>& storage);

}  // namespace orc::inspect
