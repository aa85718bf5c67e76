// libFuzzer target for the fatbin walk (raw .fatbin files): scan_fatbins
// over the whole input, exact naming on, so compressed cubins go through the
// LZ4 and zstd decoders and cubin_arch too.
#include <cstddef>
#include <cstdint>
#include <span>

#include "orchestrator/inspect/fatbin.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace orc::inspect;
  const Bytes bytes = std::as_bytes(std::span(data, size));
  const FatbinScan scan = scan_fatbins(bytes, 0, bytes.size(), {.exact = true});
  orc::fuzz::check_scan(scan, 0, bytes.size());
  // A range that starts inside the data, as a section of a host ELF does.
  if (bytes.size() > 8) {
    const FatbinScan inner = scan_fatbins(bytes, 8, bytes.size());
    orc::fuzz::check_scan(inner, 8, bytes.size());
  }
  return 0;
}
