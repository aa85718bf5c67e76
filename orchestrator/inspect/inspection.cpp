#include "orchestrator/inspect/inspection.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/inspect/ar.hpp"
#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/inspect/fatbin.hpp"
#include "orchestrator/inspect/mapped_file.hpp"
#include "orchestrator/inspect/package.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"

namespace orc::inspect {

namespace {

// How paths inside containers are written (documented in inspection.hpp):
// an ar member as "lib.a:member" (what cuobjdump's "member" lines use), a
// package member as "pkg.whl!/dir/file" (the jar-URL convention), nested
// ones by chaining: "outer.tar.zst!/dist/x.whl!/torch/lib/libx.so".
constexpr std::string_view k_ar_separator = ":";
constexpr std::string_view k_package_separator = "!/";
// Packages inside packages are opened this many levels deep, no deeper: a
// wheel inside a release tarball, not a zip bomb's matryoshka.
constexpr int k_max_package_depth = 1;
// ar archives inside ar archives (no tool makes them; a crafted one nested
// 14,000 deep overflowed the stack) are opened this many levels deep; one
// deeper is damage, reported with everything read before it.
constexpr int k_max_archive_depth = 8;
// The format of a package nested deeper than that: reported, so the user
// knows something went unread, but not opened.
constexpr std::string_view k_unopened = "package";

enum class Format { host_elf, cubin, ar, fatbin, package, other };

bool starts_with(Bytes data, std::string_view magic) {
  return data.size() >= magic.size() && as_text(data.first(magic.size())) == magic;
}

Format detect(Bytes data) {
  if (starts_with(data,
                  "\x7f"
                  "ELF")) {
    // e_machine sits at offset 18 in both ELF32 and ELF64 headers.
    const auto machine = read_le<std::uint16_t>(data, 18);
    return machine && *machine == k_em_cuda ? Format::cubin : Format::host_elf;
  }
  if (starts_with(data, "!<arch>\n")) return Format::ar;
  if (const auto magic = read_le<std::uint32_t>(data, 0); magic && *magic == k_fatbin_magic) return Format::fatbin;
  if (package_kind(data)) return Format::package;
  return Format::other;
}

arch::ComputeCapability cc_of_sm(int sm, bool arch_specific) {
  return {sm / 10, sm % 10, arch_specific ? arch::Variant::arch_specific : arch::Variant::none};
}

void add_entries(FileReport& report, const std::vector<Entry>& entries) {
  for (const Entry& e : entries) {
    ++report.entries;
    switch (e.kind) {
      case EntryKind::elf:
        ++report.elf_entries;
        report.sass.insert(e.arch);
        break;
      case EntryKind::ptx:
        ++report.ptx_entries;
        report.ptx.insert(e.arch);
        break;
      case EntryKind::lto_ir:
        ++report.lto_entries;
        break;
      case EntryKind::unknown:
        break;
    }
    if (e.compression != Compression::none) report.compressed = true;
  }
}

// A member's findings count for its container too: the container's row then
// says at a glance what the whole package holds.
void fold_member(FileReport& parent, const FileReport& member) {
  parent.sass.insert(member.sass.begin(), member.sass.end());
  parent.ptx.insert(member.ptx.begin(), member.ptx.end());
  parent.entries += member.entries;
  parent.elf_entries += member.elf_entries;
  parent.ptx_entries += member.ptx_entries;
  parent.lto_entries += member.lto_entries;
  parent.compressed = parent.compressed || member.compressed;
}

void keep_first(std::optional<Damage>& slot, std::optional<Damage> damage) {
  if (!slot && damage) slot = std::move(damage);
}

// How deep the data being scanned sits: in packages, and in ar archives.
struct Nesting {
  int packages = 0;
  int archives = 0;
};

class Scanner {
 public:
  explicit Scanner(const InspectOptions& options) : m_scan{.exact = options.exact}, m_look(options.modules) {}

  // Fills everything but path/size/sha256 of the top-level call; members get
  // all of it. `depth` counts the packages and archives this data sits inside.
  void scan(FileReport& report, Bytes data, Nesting depth) const {
    switch (detect(data)) {
      case Format::host_elf:
        return scan_host_elf(report, data);
      case Format::cubin:
        return scan_cubin(report, data);
      case Format::ar:
        return scan_ar(report, data, depth);
      case Format::fatbin: {
        report.format = "fatbin";
        FatbinScan scan = scan_fatbins(data, 0, data.size(), m_scan);
        add_entries(report, scan.entries);
        report.modules = modules_of(data, scan, CodeSection::standalone, m_look);
        report.damage = std::move(scan.damage);
        return;
      }
      case Format::package:
        if (depth.packages <= k_max_package_depth) return scan_package(report, data, depth);
        report.format = std::string(k_unopened);
        return;
      case Format::other:
        report.format = "other";
        return;
    }
  }

 private:
  void scan_host_elf(FileReport& report, Bytes data) const {
    report.format = "elf";
    auto elf = parse_elf(data);
    if (!elf) {
      report.damage = elf.error().damage;
      return;
    }
    report.object = elf->type == k_et_rel;
    DynamicInfo dynamic = read_dynamic(data, *elf);
    report.needed = std::move(dynamic.needed);
    report.soname = std::move(dynamic.soname);
    keep_first(report.damage, std::move(dynamic.damage));
    // Every section that holds device code counts for the report, the
    // relocatable one too (cuobjdump needs -all for that); modules say which
    // the runtime loads.
    for (const std::string_view name : {".nv_fatbin", "__nv_relfatbin"}) {
      const CodeSection kind = name == ".nv_fatbin" ? CodeSection::executable : CodeSection::relocatable;
      const Section* section = elf->find(name);
      if (!section || section->size == 0) continue;
      const auto end = checked_add(section->offset, section->size);
      if (!end || *end > data.size()) {
        keep_first(report.damage,
                   Damage{section->offset, "section " + std::string(name) + " (" + std::to_string(section->size) +
                                               " bytes) runs past the end of the file"});
        continue;
      }
      FatbinScan scan = scan_fatbins(data, section->offset, *end, m_scan);
      add_entries(report, scan.entries);
      for (Module& m : modules_of(data, scan, kind, m_look)) report.modules.push_back(std::move(m));
      keep_first(report.damage, std::move(scan.damage));
    }
    report.runtime = runtime_of(report);
    // Only a file with device code of its own gets a verdict to qualify.
    if (m_look && !report.object && report.entries > 0) report.runtime_code = find_runtime_code(data, *elf);
  }

  // A shared runtime names its major in the soname; a static one is the
  // device-linking toolkit's (nvcc links its own libcudart_static.a). Only a
  // file with loadable device code registers modules through the runtime.
  static std::optional<FileReport::Runtime> runtime_of(const FileReport& report) {
    for (const std::string& lib : report.needed) {
      static constexpr std::string_view k_prefix = "libcudart.so.";
      if (!lib.starts_with(k_prefix)) continue;
      const auto major = util::Version::parse(std::string_view(lib).substr(k_prefix.size()));
      if (major && major->major() > 0) return FileReport::Runtime{major->major(), lib};
    }
    if (report.object) return std::nullopt;
    std::optional<util::Version> linker;
    for (const Module& m : report.modules)
      if (m.section == CodeSection::executable && m.toolkit && (!linker || *linker < *m.toolkit)) linker = m.toolkit;
    if (!linker) return std::nullopt;
    return FileReport::Runtime{linker->major(), "static, device-linked by CUDA " + linker->truncated(2).str()};
  }

  void scan_cubin(FileReport& report, Bytes data) const {
    report.format = "cubin";
    const auto arch = cubin_arch(data);
    if (!arch) {
      report.damage = arch.error().damage;
      return;
    }
    Entry entry;
    entry.kind = EntryKind::elf;
    entry.arch = cc_of_sm(arch->sm, arch->arch_specific);
    add_entries(report, {entry});
    Module m{.section = CodeSection::standalone, .offset = 0, .size = data.size()};
    m.sass.insert(entry.arch);
    if (m_look) {
      if (const auto kernels = cubin_has_entry(data)) m.kernels = *kernels ? Kernels::yes : Kernels::no;
    }
    report.modules.push_back(std::move(m));
  }

  void scan_ar(FileReport& report, Bytes data, Nesting depth) const {
    report.format = "ar";
    if (depth.archives >= k_max_archive_depth) {
      report.damage = Damage{0, "ar archive nested " + std::to_string(depth.archives + 1) +
                                    " levels deep inside ar archives (at most " + std::to_string(k_max_archive_depth) +
                                    " are opened)"};
      return;
    }
    auto archive = parse_ar(data);
    if (!archive) {
      report.damage = archive.error().damage;
      return;
    }
    for (const ArMember& m : archive->members) {
      FileReport member;
      member.path = report.path + std::string(k_ar_separator) + m.name;
      const auto bytes = sub(data, m.offset, m.size);
      if (!bytes) {  // parse_ar bounds-checks; this guards against a parser bug, not a file
        member.damage = Damage{m.offset, "member data runs past the end of the archive"};
      } else {
        scan_member(member, *bytes, {depth.packages, depth.archives + 1});
      }
      fold_member(report, member);
      report.members.push_back(std::move(member));
    }
    report.damage = std::move(archive->damage);
  }

  void scan_package(FileReport& report, Bytes data, Nesting depth) const {
    const PackageKind kind = *package_kind(data);
    const Nesting inside{depth.packages + 1, depth.archives};
    // A package too deep to open is still listed, with its size and digest.
    const auto filter = [&](Bytes head) {
      if (package_kind(head) && inside.packages > k_max_package_depth) return MemberUse::hash;
      return read_binaries(head);
    };
    const auto visit = [&](std::string_view path, std::expected<PackageMember, Damage> read) {
      FileReport member;
      member.path = report.path + std::string(k_package_separator) + std::string(path);
      if (!read) {
        member.format = "other";
        member.damage = std::move(read.error());
      } else {
        member.size = read->size;
        member.sha256 = std::move(read->sha256);
        if (read->bytes)
          scan(member, *read->bytes, inside);
        else
          member.format = std::string(k_unopened);
      }
      // A wheel holds thousands of .py files: only members with device code,
      // damage that may hide some, or a package left unopened are worth a line.
      if (!member.device_code() && !member.damage && member.format != k_unopened && member.members.empty()) return;
      fold_member(report, member);
      report.members.push_back(std::move(member));
    };
    const PackageWalk walk = walk_package(data, kind, filter, visit);
    report.format = walk.format;
    report.damage = walk.damage;
  }

  void scan_member(FileReport& member, Bytes bytes, Nesting depth) const {
    member.size = bytes.size();
    member.sha256 = digest::sha256(bytes).hex();
    scan(member, bytes, depth);
  }

  ScanOptions m_scan;
  bool m_look = false;
};

// One unit of work: hash a file, or scan it. Hashing and scanning the same
// file are separate tasks so that one large file keeps two cores busy.
struct Task {
  std::size_t file = 0;
  bool hash = false;
};

}  // namespace

CodeSets loadable_code(const FileReport& r) {
  if (r.modules.empty() || r.object) return {r.sass, r.ptx};
  CodeSets out;
  for (const auto& m : r.modules) {
    if (!m.loadable()) continue;
    out.sass.insert(m.sass.begin(), m.sass.end());
    for (const auto& p : m.ptx) out.ptx.insert(p.arch);
  }
  return out;
}

CodeSets relocatable_only_code(const FileReport& r) {
  CodeSets out;
  if (r.modules.empty() || r.object) return out;
  const CodeSets loadable = loadable_code(r);
  for (const auto& m : r.modules) {
    if (m.loadable()) continue;
    for (const auto& cc : m.sass)
      if (!loadable.sass.contains(cc)) out.sass.insert(cc);
    for (const auto& p : m.ptx)
      if (!loadable.ptx.contains(p.arch)) out.ptx.insert(p.arch);
  }
  return out;
}

bool FileReport::device_code() const {
  return entries > 0 || std::ranges::any_of(members, [](const FileReport& m) { return m.device_code(); });
}

std::vector<FileReport> inspect_files(const std::vector<std::filesystem::path>& paths, const InspectOptions& options) {
  // Every file is mapped before any work starts; one that cannot be is a
  // report with its error, and the others are inspected all the same.
  std::vector<FileReport> reports(paths.size());
  std::vector<MappedFile> files(paths.size());
  std::vector<Task> tasks;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    reports[i].path = paths[i].string();
    auto file = MappedFile::open(paths[i]);
    if (!file) {
      reports[i].error = "cannot read: " + file.error();
      continue;
    }
    files[i] = std::move(*file);
    reports[i].size = files[i].size();
    tasks.push_back({i, true});
    tasks.push_back({i, false});
  }
  // Largest files first (they bound the wall time), each file's hash and
  // scan next to each other so one big file keeps two threads busy.
  std::ranges::stable_sort(tasks,
                           [&](const Task& a, const Task& b) { return files[a.file].size() > files[b.file].size(); });

  const Scanner scanner(options);
  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  std::exception_ptr first_error;
  auto work = [&] {
    for (std::size_t t; (t = next.fetch_add(1)) < tasks.size();) {
      const Task& task = tasks[t];
      try {
        // A file truncated under the reads must not kill the process.
        const ReadGuard guard(files[task.file]);
        // The two tasks of a file write disjoint fields of its report.
        if (task.hash)
          reports[task.file].sha256 = digest::sha256(files[task.file].bytes()).hex();
        else
          scanner.scan(reports[task.file], files[task.file].bytes(), {});
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
    }
  };
  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, tasks.size()));
  {
    std::vector<std::jthread> pool;
    for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
    work();
  }
  if (first_error) std::rethrow_exception(first_error);
  // What was read from a file that changed meanwhile describes no file.
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (reports[i].error) continue;
    if (auto changed = files[i].changed()) reports[i] = FileReport{.path = paths[i].string(), .error = *changed};
  }
  return reports;
}

void scan_bytes(FileReport& report, Bytes data, const InspectOptions& options) {
  const Scanner scanner(options);
  scanner.scan(report, data, Nesting{});
}

void require_readable(const std::vector<FileReport>& reports) {
  std::vector<util::Diagnostic> errors;
  for (const auto& r : reports)
    if (r.error)
      errors.push_back(
          util::Diagnostic{.where = {.file = util::printable(r.path)}, .message = util::printable(*r.error)});
  if (!errors.empty()) throw util::Failure(util::ExitCode::bad_input, std::move(errors));
}

}  // namespace orc::inspect
