// libFuzzer target for ELF files (host objects, libraries, cubins):
// parse_elf and cubin_arch, then the fatbin walk over every .nv_fatbin and
// __nv_relfatbin section with exact naming and the module grouping with a
// look inside each module, as `orchestrate inspect` does for a verdict; the
// dynamic section, imports, entry points and the run-time image search.
#include <cstddef>
#include <cstdint>
#include <span>

#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/inspect/fatbin.hpp"
#include "orchestrator/inspect/module.hpp"
#include "orchestrator/inspect/runtime_code.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace orc::inspect;
  using orc::fuzz::check;
  const Bytes bytes = std::as_bytes(std::span(data, size));
  const auto arch = cubin_arch(bytes);
  if (arch)
    check(arch->sm > 0 && arch->sm <= 255);
  else
    check(!arch.error().damage.what.empty());

  const auto elf = parse_elf(bytes);
  if (!elf) {
    check(!elf.error().damage.what.empty());
    // cubin_arch parses the same ELF first, so it fails the same way.
    check(!arch && arch.error().kind == elf.error().kind);
    return 0;
  }
  (void)read_dynamic(bytes, *elf);
  (void)imported_symbols(bytes, *elf);
  (void)cubin_has_entry(bytes);
  const RuntimeCode runtime = find_runtime_code(bytes, *elf);
  check(runtime.containers == 0 || !runtime.sections.empty());
  for (const Section& s : elf->sections) {
    check(sub(bytes, s.offset, s.size).has_value() || s.size == 0);
    const Section* found = elf->find(s.name);
    check(found != nullptr && found->name == s.name && found <= &s);
    if (s.name != ".nv_fatbin" && s.name != "__nv_relfatbin") continue;
    const std::uint64_t end = s.offset + s.size;
    if (s.size == 0) continue;  // SHT_NOBITS: nothing in the file
    const FatbinScan scan = scan_fatbins(bytes, s.offset, end, {.exact = true});
    orc::fuzz::check_scan(scan, s.offset, end);
    const auto modules = modules_of(bytes, scan, CodeSection::executable, true);
    check(modules.size() == scan.spans.size());
  }
  return 0;
}
