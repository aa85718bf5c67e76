#include "orchestrator/inspect/runtime_code.hpp"

#include <algorithm>

#include "orchestrator/inspect/fatbin.hpp"

namespace orc::inspect {

namespace {

constexpr std::uint32_t k_sht_progbits = 1;
constexpr std::uint64_t k_shf_alloc = 2;
constexpr std::uint64_t k_shf_execinstr = 4;
constexpr std::uint64_t k_alignment = 8;
constexpr std::string_view k_magic = "\x50\xed\x55\xba";

// A container that holds only kinds nvcc writes, with archs a GPU can have:
// random bytes that happen to carry the magic fail one of these.
bool plausible(const FatbinScan& scan) {
  if (scan.damage || scan.containers != 1 || scan.entries.empty()) return false;
  return std::ranges::all_of(scan.entries, [](const Entry& e) {
    const int number = e.header_arch.major() * 10 + e.header_arch.minor();
    return e.kind != EntryKind::unknown && number >= 20 && number <= 255;
  });
}

void add_builder(RuntimeCode& code, std::string what) {
  if (std::ranges::find(code.builders, what) == code.builders.end()) code.builders.push_back(std::move(what));
}

void scan_section(Bytes data, const Section& section, RuntimeCode& code) {
  const auto bytes = sub(data, section.offset, section.size);
  if (!bytes) return;
  const std::string_view text = as_text(*bytes);
  std::size_t found = 0;
  for (std::size_t at = text.find(k_magic); at != std::string_view::npos; at = text.find(k_magic, at)) {
    if ((section.offset + at) % k_alignment != 0) {
      ++at;
      continue;
    }
    const auto fat_size = read_le<std::uint64_t>(*bytes, at + 8);
    const auto version = read_le<std::uint16_t>(*bytes, at + 4);
    const auto header = read_le<std::uint16_t>(*bytes, at + 6);
    const auto end = fat_size ? checked_add(at + 16, *fat_size) : std::nullopt;
    if (!version || *version != 1 || !header || *header != 16 || !end || *fat_size == 0 ||
        *fat_size % k_alignment != 0 || *end > bytes->size()) {
      at += k_alignment;
      continue;
    }
    const FatbinScan scan = scan_fatbins(*bytes, at, *end);
    if (!plausible(scan)) {
      // Resume past what this candidate's walk read: a crafted chain of
      // candidates nested in each other's entries is then walked once, not
      // once per candidate (quadratic in the section's size).
      std::uint64_t next = at + k_alignment;
      if (scan.damage && scan.damage->offset > next) next = scan.damage->offset;
      if (!scan.damage) next = *end;
      at = static_cast<std::size_t>((next + k_alignment - 1) / k_alignment * k_alignment);
      continue;
    }
    ++found;
    for (const Entry& e : scan.entries) {
      if (e.kind == EntryKind::elf) code.sass.insert(e.arch);
      if (e.kind == EntryKind::ptx) code.ptx.push_back({e.arch, util::Version(e.code_major, e.code_minor)});
      if (e.kind == EntryKind::lto_ir) ++code.lto_entries;
    }
    at = static_cast<std::size_t>(*end);
  }
  if (found) {
    code.containers += found;
    code.sections.push_back(section.name);
  }
  if (text.find("libnvJitLink.so") != std::string_view::npos) add_builder(code, "nvJitLink (names libnvJitLink.so)");
  if (text.find("libnvrtc.so") != std::string_view::npos) add_builder(code, "NVRTC (names libnvrtc.so)");
}

}  // namespace

RuntimeCode find_runtime_code(Bytes data, const ElfFile& elf) {
  RuntimeCode code;
  for (const Section& s : elf.sections) {
    if (s.type != k_sht_progbits || !(s.flags & k_shf_alloc) || (s.flags & k_shf_execinstr)) continue;
    if (s.name == ".nv_fatbin" || s.name == "__nv_relfatbin") continue;
    scan_section(data, s, code);
  }
  // A NEEDED libnvJitLink alone proves nothing (cuSOLVER 12 needs it and
  // calls none of it); an imported function does.
  for (const std::string& name : imported_symbols(data, elf)) {
    if (name.find("nvJitLink") != std::string::npos)
      add_builder(code, "nvJitLink (imports " + name + ")");
    else if (name.starts_with("nvrtc") || name.find("nvrtcHelper") != std::string::npos)
      add_builder(code, "NVRTC (imports " + name + ")");
  }
  // One line per library, however many symbols showed it.
  std::vector<std::string> kept;
  for (const auto& b : code.builders) {
    const std::string lib = b.substr(0, b.find(' '));
    if (std::ranges::none_of(kept, [&](const std::string& k) { return k.starts_with(lib + " "); })) kept.push_back(b);
  }
  code.builders = std::move(kept);
  return code;
}

}  // namespace orc::inspect
