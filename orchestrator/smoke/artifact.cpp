#include "orchestrator/smoke/artifact.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "orchestrator/inspect/ar.hpp"
#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/inspect/fatbin.hpp"
#include "orchestrator/inspect/mapped_file.hpp"
#include "orchestrator/inspect/module.hpp"
#include "orchestrator/inspect/package.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::smoke {

namespace {

using inspect::Bytes;

// Container header: u32 magic | u16 version | u16 header_size | u64 fat_size
// (fatbin.cpp documents the format).
constexpr std::uint64_t k_container_header = 16;
constexpr std::uint64_t k_alignment = 8;
// Packages inside packages are opened this deep, as inspect does.
constexpr int k_max_package_depth = 1;
constexpr int k_max_archive_depth = 8;

class Finder {
 public:
  explicit Finder(const FatbinVisitor& visit) : m_visit(visit) {}

  void scan(Bytes data, const std::string& where, int depth) {
    if (data.size() >= 4 && inspect::as_text(data.first(4)) ==
                                "\x7f"
                                "ELF") {
      const auto machine = inspect::read_le<std::uint16_t>(data, 18);
      if (machine && *machine == inspect::k_em_cuda) return cubin(data, where);
      return host_elf(data, where);
    }
    if (data.size() >= 8 && inspect::as_text(data.first(8)) == "!<arch>\n") return archive(data, where, depth);
    if (const auto magic = inspect::read_le<std::uint32_t>(data, 0); magic && *magic == inspect::k_fatbin_magic)
      return containers(data, 0, data.size(), where);
    if (const auto kind = inspect::package_kind(data); kind && depth <= k_max_package_depth) {
      const auto visit = [&](std::string_view path, std::expected<inspect::PackageMember, inspect::Damage> member) {
        if (member && member->bytes) scan(*member->bytes, where + "!/" + std::string(path), depth + 1);
      };
      inspect::walk_package(data, *kind, inspect::read_binaries, visit);
    }
  }

  std::size_t count() const { return m_count; }

 private:
  void host_elf(Bytes data, const std::string& where) {
    const auto elf = inspect::parse_elf(data);
    if (!elf) return;
    const inspect::Section* section = elf->find(".nv_fatbin");
    if (!section || section->size == 0) return;
    const auto end = inspect::checked_add(section->offset, section->size);
    if (!end || *end > data.size()) return;
    // What the runtime would link for a GPU the device-linked code misses.
    m_relocatable.clear();
    if (elf->type != inspect::k_et_rel)
      if (const inspect::Section* rel = elf->find("__nv_relfatbin"); rel && rel->size > 0)
        if (const auto rel_end = inspect::checked_add(rel->offset, rel->size); rel_end && *rel_end <= data.size())
          m_relocatable = inspect::modules_of(data, inspect::scan_fatbins(data, rel->offset, *rel_end),
                                              inspect::CodeSection::relocatable, true);
    containers(data, section->offset, *end, where + " .nv_fatbin");
    m_relocatable.clear();
  }

  void cubin(Bytes data, const std::string& where) {
    EmbeddedFatbin image{.where = where, .bytes = data, .sass = {}, .ptx = {}, .ptx_images = {}};
    if (const auto arch = inspect::cubin_arch(data))
      image.sass.insert(
          {arch->sm / 10, arch->sm % 10, arch->arch_specific ? arch::Variant::arch_specific : arch::Variant::none});
    if (const auto kernels = inspect::cubin_has_entry(data))
      image.kernels = *kernels ? inspect::Kernels::yes : inspect::Kernels::no;
    emit(image);
  }

  void archive(Bytes data, const std::string& where, int depth) {
    // ar inside ar is opened as deep as inspect opens it, no deeper.
    if (m_archive_depth >= k_max_archive_depth) return;
    const auto ar = inspect::parse_ar(data);
    if (!ar) return;
    ++m_archive_depth;
    for (const auto& member : ar->members)
      if (const auto bytes = inspect::sub(data, member.offset, member.size))
        scan(*bytes, where + ":" + member.name, depth);
    --m_archive_depth;
  }

  // Containers back to back in data[begin, end), zero padding between them
  // skipped in 8-byte steps; the walk stops at anything else.
  void containers(Bytes data, std::uint64_t begin, std::uint64_t end, const std::string& where) {
    std::size_t index = 0;
    for (std::uint64_t at = begin; at + k_container_header <= end;) {
      const auto magic = inspect::read_le<std::uint32_t>(data, at);
      if (magic && *magic == 0) {
        at += k_alignment;
        continue;
      }
      const auto header_size = inspect::read_le<std::uint16_t>(data, at + 6);
      const auto fat_size = inspect::read_le<std::uint64_t>(data, at + 8);
      if (!magic || *magic != inspect::k_fatbin_magic || !header_size || !fat_size) return;
      const auto size = inspect::checked_add(*header_size, *fat_size);
      const auto stop = size ? inspect::checked_add(at, *size) : std::nullopt;
      if (!stop || *stop > end) return;
      EmbeddedFatbin image{.where = where + "[" + std::to_string(index++) + "]",
                           .bytes = *inspect::sub(data, at, *size),
                           .sass = {},
                           .ptx = {},
                           .ptx_images = {}};
      const inspect::FatbinScan scan = inspect::scan_fatbins(data, at, *stop);
      for (const inspect::Module& m : inspect::modules_of(data, scan, inspect::CodeSection::executable, true)) {
        image.sass.insert(m.sass.begin(), m.sass.end());
        image.ptx_images.insert(image.ptx_images.end(), m.ptx.begin(), m.ptx.end());
        for (const auto& p : m.ptx) image.ptx.insert(p.arch);
        image.kernels = m.kernels;
        image.module = m;
      }
      image.relocatable = m_relocatable;
      emit(image);
      at = *stop;
    }
  }

  // The driver reads images in place; one that is not 8-byte aligned (a
  // member inside a package buffer can be anywhere) is copied first.
  void emit(EmbeddedFatbin& image) {
    ++m_count;
    if (reinterpret_cast<std::uintptr_t>(image.bytes.data()) % k_alignment == 0) return m_visit(image);
    std::vector<std::uint64_t> aligned((image.bytes.size() + 7) / 8);
    std::memcpy(aligned.data(), image.bytes.data(), image.bytes.size());
    image.bytes = {reinterpret_cast<const std::byte*>(aligned.data()), image.bytes.size()};
    m_visit(image);
  }

  const FatbinVisitor& m_visit;
  std::size_t m_count = 0;
  std::vector<inspect::Module> m_relocatable;  // of the host ELF being walked
  int m_archive_depth = 0;
};

}  // namespace

std::size_t for_each_fatbin_in(std::span<const std::byte> data, const std::string& where, const FatbinVisitor& visit) {
  Finder finder(visit);
  finder.scan(data, where, 0);
  return finder.count();
}

std::size_t for_each_fatbin(const std::filesystem::path& path, const FatbinVisitor& visit) {
  auto file = inspect::MappedFile::open(path);
  if (!file)
    throw util::Failure(util::ExitCode::bad_input, {util::Diagnostic{.where = {.file = path.string()},
                                                                     .message = "cannot read: " + file.error()}});
  std::size_t count = 0;
  {
    const inspect::ReadGuard guard(*file);
    count = for_each_fatbin_in(file->bytes(), path.string(), visit);
  }
  if (auto changed = file->changed())
    throw util::Failure(util::ExitCode::bad_input,
                        {util::Diagnostic{.where = {.file = path.string()}, .message = *changed}});
  return count;
}

}  // namespace orc::smoke
