#include "orchestrator/inspect/module.hpp"

#include <algorithm>
#include <cctype>

#include "orchestrator/inspect/elf.hpp"

namespace orc::inspect {

namespace {

// What ptxas and nvlink write into a cubin's .note.nv.tkinfo (13.0: "Cuda
// compilation tools, release 13.0, V13.0.88"); 11.x cubins have no such note.
constexpr std::string_view k_tkinfo = "Cuda compilation tools, release ";
// Decompressing one image is enough to tell a module's kernels; an image
// above this size is not decompressed (memory), so a module made only of
// such images stays unknown and is judged as holding kernels.
constexpr std::uint64_t k_max_look = 64ull << 20;

std::optional<util::Version> tkinfo_release(std::string_view text) {
  const auto at = text.find(k_tkinfo);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at + k_tkinfo.size());
  std::size_t n = 0;
  while (n < rest.size() && n < 8 && (std::isdigit(static_cast<unsigned char>(rest[n])) || rest[n] == '.')) ++n;
  auto v = util::Version::parse(rest.substr(0, n));
  if (!v) return std::nullopt;
  return *v;
}

// A PTX module defines a kernel where a `.entry` directive starts a
// declaration: `.visible .entry name(`, `.entry name(`, `.weak .entry`.
// Returns the kernels' names, sorted.
std::vector<std::string> ptx_entries(std::string_view text) {
  constexpr std::size_t k_max_name = 4096;
  std::vector<std::string> names;
  for (std::size_t at = text.find(".entry"); at != std::string_view::npos; at = text.find(".entry", at + 1)) {
    const bool starts = at == 0 || std::isspace(static_cast<unsigned char>(text[at - 1]));
    std::size_t i = at + 6;
    if (!starts || i >= text.size() || !std::isspace(static_cast<unsigned char>(text[i]))) continue;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t end = i;
    while (end < text.size() && end - i < k_max_name && text[end] != '(' &&
           !std::isspace(static_cast<unsigned char>(text[end])))
      ++end;
    names.emplace_back(text.substr(i, end - i));
  }
  std::ranges::sort(names);
  return names;
}

struct Look {
  std::optional<bool> kernels;
  std::vector<std::string> names;
  std::optional<util::Version> toolkit;
};

Look look_at(const Entry& entry, Bytes image) {
  Look look;
  if (entry.kind == EntryKind::elf) {
    if (auto names = cubin_entries(image)) {
      look.kernels = !names->empty();
      look.names = std::move(*names);
    }
    look.toolkit = tkinfo_release(as_text(image));
  } else if (entry.kind == EntryKind::ptx) {
    // Text that is not PTX at all says nothing either way.
    const std::string_view text = as_text(image);
    look.names = ptx_entries(text);
    if (!look.names.empty())
      look.kernels = true;
    else if (text.find(".version") != std::string_view::npos && text.find(".target") != std::string_view::npos)
      look.kernels = false;
  }
  return look;
}

// The images of a module in the order they are worth reading: plain ones
// first (no copy), cubins before PTX (a cubin also names its toolkit), then
// compressed ones the same way, smallest first; LTO-IR and unknown kinds say
// nothing a listing can read.
std::vector<const Entry*> reading_order(const std::vector<Entry>& entries, const Container& span) {
  std::vector<const Entry*> order;
  for (std::size_t i = span.first_entry; i < span.first_entry + span.entry_count && i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.kind == EntryKind::elf || e.kind == EntryKind::ptx) order.push_back(&e);
  }
  std::ranges::stable_sort(order, [](const Entry* a, const Entry* b) {
    const bool pa = a->compression == Compression::none, pb = b->compression == Compression::none;
    if (pa != pb) return pa;
    const bool ea = a->kind == EntryKind::elf, eb = b->kind == EntryKind::elf;
    if (ea != eb) return ea;
    return a->uncompressed_size < b->uncompressed_size;
  });
  return order;
}

void look_inside(Module& module, Bytes data, const std::vector<Entry>& entries, const Container& span) {
  std::vector<std::byte> storage;
  for (const Entry* e : reading_order(entries, span)) {
    if (e->compression != Compression::none && e->uncompressed_size > k_max_look) continue;
    const auto image = entry_image(data, *e, storage);
    if (!image) continue;
    const Look look = look_at(*e, *image);
    if (look.toolkit && (!module.toolkit || *module.toolkit < *look.toolkit)) module.toolkit = look.toolkit;
    if (look.kernels) {
      // Every image of one container is the same code for another target,
      // so the first that answers answers for the module.
      module.kernels = *look.kernels ? Kernels::yes : Kernels::no;
      module.kernel_names = look.names;
      return;
    }
  }
}

}  // namespace

std::string_view code_section_name(CodeSection s) {
  switch (s) {
    case CodeSection::executable:
      return ".nv_fatbin";
    case CodeSection::relocatable:
      return "__nv_relfatbin";
    case CodeSection::standalone:
      return "file";
  }
  return "file";
}

std::string_view kernels_name(Kernels k) {
  switch (k) {
    case Kernels::yes:
      return "yes";
    case Kernels::no:
      return "no";
    case Kernels::unknown:
      return "unknown";
  }
  return "unknown";
}

std::set<arch::ComputeCapability> Module::ptx_archs() const {
  std::set<arch::ComputeCapability> out;
  for (const auto& p : ptx) out.insert(p.arch);
  return out;
}

std::vector<Module> modules_of(Bytes data, const FatbinScan& scan, CodeSection section, bool look) {
  std::vector<Module> out;
  for (const Container& span : scan.spans) {
    Module m{.section = section, .offset = span.offset, .size = span.size};
    for (std::size_t i = span.first_entry; i < span.first_entry + span.entry_count && i < scan.entries.size(); ++i) {
      const Entry& e = scan.entries[i];
      if (e.kind == EntryKind::elf) m.sass.insert(e.arch);
      if (e.kind == EntryKind::ptx) m.ptx.push_back({e.arch, util::Version(e.code_major, e.code_minor)});
      if (e.kind == EntryKind::lto_ir) ++m.lto_entries;
    }
    // An empty container (nvcc 11.8 writes one for the device link of a
    // PTX-only build) holds nothing to launch.
    if (m.sass.empty() && m.ptx.empty() && m.lto_entries == 0 && span.entry_count == 0)
      m.kernels = Kernels::no;
    else if (look)
      look_inside(m, data, scan.entries, span);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace orc::inspect
