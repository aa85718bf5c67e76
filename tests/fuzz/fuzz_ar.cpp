// libFuzzer target for ar archives (static libraries): parse_ar, then
// parse_elf on every member and the fatbin walk over its device code.
#include <cstddef>
#include <cstdint>
#include <span>

#include "orchestrator/inspect/ar.hpp"
#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/inspect/fatbin.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace orc::inspect;
  using orc::fuzz::check;
  const Bytes bytes = std::as_bytes(std::span(data, size));
  const auto archive = parse_ar(bytes);
  if (!archive) {
    check(archive.error().kind == ParseFailure::Kind::not_this_format);
    return 0;
  }
  if (archive->damage) check(!archive->damage->what.empty() && archive->damage->offset <= bytes.size());
  std::uint64_t previous_end = 8;  // after "!<arch>\n"
  for (const ArMember& m : archive->members) {
    const auto member = sub(bytes, m.offset, m.size);
    check(member.has_value() && m.offset >= previous_end);
    previous_end = m.offset + m.size;
    const auto elf = parse_elf(*member);
    if (!elf) continue;
    for (const char* name : {".nv_fatbin", "__nv_relfatbin"}) {
      const Section* s = elf->find(name);
      if (!s || s->size == 0) continue;
      orc::fuzz::check_scan(scan_fatbins(*member, s->offset, s->offset + s->size, {.exact = true}), s->offset,
                            s->offset + s->size);
    }
  }
  return 0;
}
