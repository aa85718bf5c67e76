#pragma once
// Shared by the binary-format fuzz targets: a broken promise aborts, so the
// fuzzer keeps the input that caused it; and the fatbin invariants that every
// caller of scan_fatbins relies on, checked wherever a scan runs.
#include <cstdlib>

#include "orchestrator/inspect/fatbin.hpp"

namespace orc::fuzz {

inline void check(bool ok) {
  if (!ok) std::abort();
}

// Entries lie inside [begin, end) in file order, with sane headers; ELF names
// never carry 'f'; damage, when present, is inside the range and explained.
inline void check_scan(const inspect::FatbinScan& scan, std::uint64_t begin, std::uint64_t end) {
  using inspect::EntryKind;
  std::uint64_t previous_end = begin;
  for (const auto& e : scan.entries) {
    check(e.offset >= previous_end);
    check(e.header_size >= 64 && e.header_size % 8 == 0);
    const auto entry_end = inspect::checked_add(e.offset + e.header_size, e.payload_size);
    check(entry_end && *entry_end <= end);
    previous_end = *entry_end;
    if (e.compression != inspect::Compression::none) check(e.compressed_size <= e.payload_size);
    if (e.kind == EntryKind::elf) check(e.arch.variant() != arch::Variant::family);
    if (e.kind != EntryKind::elf) check(!e.arch_from_cubin && e.arch == e.header_arch);
  }
  if (!scan.entries.empty()) check(scan.containers > 0);
  if (scan.damage) {
    check(!scan.damage->what.empty());
    check(scan.damage->offset >= begin && scan.damage->offset <= end);
  }
}

}  // namespace orc::fuzz
