// cuobjdump --list-elf / --list-ptx, byte for byte (fatbin-format.md 4 and 8).
//
// What cuobjdump 13.0.85 does, every rule below checked against it (goldens
// in tests/inspect/golden/13.0) and against 12.4 unless said otherwise:
//   - files under 16 bytes: "Invalid fatbin header", whatever they hold
//     (11.8 said "does not contain device code"); a directory: "Memory
//     allocation failure";
//   - ar archives: a "member" line before every member that is ELF, the
//     walk ending at the first member that is not (a text file, a raw
//     fatbin); cubin members print the line and nothing; when no member had
//     a fatbin section, "does not contain device code" after the lines;
//   - a raw fatbin (magic 0xBA55ED50): every container in it;
//   - a cubin (e_machine 190): one line, "<stem>.<arch>.cubin";
//   - other ELF: .nv_fatbin, else __nv_relfatbin; with -all both,
//     .nv_fatbin first even when __nv_relfatbin comes first in the file;
//     neither (or a broken ELF): "does not contain device code", 255;
//   - LTO-IR entries: one "Can't deobfuscate" warning each, never listed
//     (11.8 skipped them silently); kinds other than 1, 2 and 8 listed as
//     PTX (12.4 skipped them);
//   - damage: the entries before it stay listed, then "Invalid fatbin
//     header", exit 1, and no "No ... file found" lines.
// Unlike 13.0, which refuses sm_35..sm_72 cubins ("Support for 'sm_35' has
// been removed"), old cubins list as 11.8 lists them.
// Messages name the path made absolute without normalising it
// ("/cwd/./x/../k.o"; 11.8 printed relative paths as given).
//
// Spaces in that path: cuobjdump derives names from it the way it derives
// them from identifiers, splitting on spaces with strtok, which cuts its own
// copy of the path at the first space. So "/d/sp ace.o" lists as
// "sp-ace.1.sm_70.cubin", then "sp.2.sm_90.cubin", and every later message
// says '/d/sp' (11.8, 12.4 and 13.0 alike); member lines keep the whole path.
#include "orchestrator/inspect/listing.hpp"

#include <cstdio>
#include <system_error>
#include <vector>

#include "orchestrator/inspect/ar.hpp"
#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/inspect/fatbin.hpp"
#include "orchestrator/inspect/mapped_file.hpp"

namespace orc::inspect {

namespace {

// cuobjdump pads its message classes to one width; scripts match on these.
constexpr std::string_view k_info = "cuobjdump info    : ";
constexpr std::string_view k_warning = "cuobjdump warning : ";
constexpr std::string_view k_fatal = "cuobjdump fatal   : ";

constexpr std::uint64_t k_fatbin_header_size = 16;
constexpr std::string_view k_ar_magic = "!<arch>\n";
constexpr std::string_view k_exec_section = ".nv_fatbin";
constexpr std::string_view k_reloc_section = "__nv_relfatbin";

constexpr int k_exit_fatal = 1;
constexpr int k_exit_no_device_code = 255;

// "sm_" + digits + suffix: PTX keeps 'a' and 'f' (from its header); a cubin
// cannot record 'f', so cuobjdump never prints it for ELF.
std::string arch_name(const arch::ComputeCapability& cc, bool elf) {
  std::string name = "sm_" + std::to_string(cc.number());
  if (cc.variant() == arch::Variant::arch_specific) name += 'a';
  if (cc.variant() == arch::Variant::family && !elf) name += 'f';
  return name;
}

// printf("%s file %4d: %s\n"): right-aligned in 4 columns, wider past 9999.
std::string listing_line(std::string_view kind, int n, std::string_view name) {
  char number[16];
  std::snprintf(number, sizeof number, "%4d", n);
  std::string line;
  line.reserve(kind.size() + 8 + name.size() + 4);
  line.append(kind).append(" file ").append(number).append(": ").append(name).append("\n");
  return line;
}

bool starts_with(Bytes data, std::string_view prefix) { return as_text(data).starts_with(prefix); }

class Lister {
 public:
  Lister(const std::filesystem::path& path, const ListOptions& options) : m_options(options) {
    std::error_code error;
    const auto absolute = std::filesystem::absolute(path, error);
    m_path = error ? path.string() : absolute.string();
    m_message_path = m_path;
    m_stem = listing_stem(m_path);
  }

  ListResult run(const std::filesystem::path& path) {
    // What cuobjdump says for a directory, odd as it reads.
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) return fatal("Memory allocation failure");
    auto file = MappedFile::open(path);
    if (!file) return fatal("Could not open input file '" + m_message_path + "'");
    ListResult listed;
    {
      const ReadGuard guard(*file);  // a file truncated under the listing must not kill the process
      listed = list(file->bytes());
    }
    // cuobjdump has no message for it; what was listed describes no file.
    if (auto changed = file->changed()) {
      m_result = {};
      return fatal("File '" + m_message_path + "' " + *changed);
    }
    return listed;
  }

 private:
  enum class Status { listed, no_sections, fatal };

  ListResult list(const Bytes data) {
    // Shorter than a fatbin header: cuobjdump reads it as a broken fatbin,
    // even when it starts like an ELF file or an archive.
    if (data.size() < k_fatbin_header_size) return fatal(invalid_header());
    if (starts_with(data, k_ar_magic)) return list_archive(data);
    if (const auto elf = parse_elf(data)) {
      if (elf->machine == k_em_cuda) return list_cubin(data);
      if (const auto status = list_host_elf(data, *elf); status != Status::listed) return finish_early(status);
      return finish();
    } else if (elf.error().kind == ParseFailure::Kind::corrupt) {
      return no_device_code();
    }
    if (read_le<std::uint32_t>(data, 0) != k_fatbin_magic) return no_device_code();
    if (!walk(data, 0, data.size())) return fatal(invalid_header());
    return finish();
  }

  ListResult list_archive(Bytes data) {
    const auto archive = parse_ar(data);
    bool device_code = false;
    if (archive) {
      for (const ArMember& member : archive->members) {
        const auto bytes = sub(data, member.offset, member.size);
        if (!bytes) break;  // parse_ar keeps members inside the data; not trusted blindly
        const auto elf = parse_elf(*bytes);
        // cuobjdump stops at the first member that is not ELF at all.
        if (!elf && elf.error().kind == ParseFailure::Kind::not_this_format) break;
        m_result.out += "\nmember " + m_path + ":" + member.name + ":\n";
        // A cubin member, or a broken one, gets its line and nothing else.
        if (!elf || elf->machine == k_em_cuda) continue;
        const Status status = list_host_elf(*bytes, *elf);
        if (status == Status::fatal) return finish_early(status);
        device_code = device_code || status == Status::listed;
      }
    }
    if (!device_code) return no_device_code();
    return finish();
  }

  ListResult list_cubin(Bytes data) {
    const auto cubin = cubin_arch(data);
    if (!cubin) return no_device_code();
    if (m_options.elf) {
      const arch::ComputeCapability cc(cubin->sm / 10, cubin->sm % 10,
                                       cubin->arch_specific ? arch::Variant::arch_specific : arch::Variant::none);
      m_result.out += listing_line("ELF", ++m_elf, m_stem + "." + arch_name(cc, true) + ".cubin");
      cut_path_at_space();
    }
    return finish();
  }

  // The fatbin sections of a host ELF: .nv_fatbin, else __nv_relfatbin;
  // both with all_sections, .nv_fatbin first.
  Status list_host_elf(Bytes data, const ElfFile& elf) {
    std::vector<const Section*> sections;
    const Section* exec = elf.find(k_exec_section);
    const Section* reloc = elf.find(k_reloc_section);
    if (exec) sections.push_back(exec);
    if (reloc && (m_options.all_sections || !exec)) sections.push_back(reloc);
    if (sections.empty()) return Status::no_sections;
    for (const Section* section : sections)
      if (!walk(data, section->offset, section->offset + section->size)) return Status::fatal;
    return Status::listed;
  }

  // Lists the entries of the containers in data[begin, end); false when the
  // walk stopped at damage (what came before it is listed).
  bool walk(Bytes data, std::uint64_t begin, std::uint64_t end) {
    const FatbinScan scan = scan_fatbins(data, begin, end, ScanOptions{.exact = m_options.exact});
    for (const Entry& entry : scan.entries) list_entry(entry);
    return !scan.damage;
  }

  void list_entry(const Entry& entry) {
    if (entry.kind == EntryKind::lto_ir) {
      m_result.err +=
          std::string(k_warning) + "Can't deobfuscate entry '" + m_message_path + "' without obfuscation key\n";
      return;
    }
    const bool elf = entry.kind == EntryKind::elf;
    if (elf ? !m_options.elf : !m_options.ptx) return;
    const int n = elf ? ++m_elf : ++m_ptx;
    const std::string arch = arch_name(elf ? entry.arch : entry.header_arch, elf);
    const std::string ext = elf ? ".cubin" : ".ptx";
    // An identifier replaces the stem and drops the index; the count goes on.
    const std::string name = entry.identifier.empty() ? m_stem + "." + std::to_string(n) + "." + arch + ext
                                                      : identifier_stem(entry.identifier) + "." + arch + ext;
    m_result.out += listing_line(elf ? "ELF" : "PTX", n, name);
    if (entry.identifier.empty()) cut_path_at_space();
  }

  // What strtok leaves of cuobjdump's path once a name came from it.
  void cut_path_at_space() {
    if (const std::size_t space = m_message_path.find(' '); space != std::string::npos) {
      m_message_path.resize(space);
      m_stem = listing_stem(m_message_path);
    }
  }

  std::string invalid_header() const { return "Invalid fatbin header in '" + m_message_path + "'"; }

  ListResult fatal(const std::string& message) {
    m_result.err += std::string(k_fatal) + message + "\n";
    m_result.exit_code = k_exit_fatal;
    return std::move(m_result);
  }

  ListResult no_device_code() {
    m_result.err += std::string(k_info) + "File '" + m_message_path + "' does not contain device code\n";
    m_result.exit_code = k_exit_no_device_code;
    return std::move(m_result);
  }

  ListResult finish_early(Status status) {
    return status == Status::fatal ? fatal(invalid_header()) : no_device_code();
  }

  // The end of a run that found device code: say which wanted kind had none.
  ListResult finish() {
    const auto none_found = [&](std::string_view kind) {
      m_result.err += std::string(k_info) + "No " + std::string(kind) + " file found to extract from '" +
                      m_message_path + "'. You may try with -all option.\n";
    };
    if (m_options.elf && m_elf == 0) none_found("ELF");
    if (m_options.ptx && m_ptx == 0) none_found("PTX");
    return std::move(m_result);
  }

  ListOptions m_options;
  std::string m_path;          // absolute, for member lines
  std::string m_message_path;  // the same, cut at its first space once a name came from it
  std::string m_stem;          // listing_stem(m_message_path)
  ListResult m_result;
  int m_elf = 0;  // 1-based counters, across containers, members and sections
  int m_ptx = 0;
};

}  // namespace

ListResult list_device_code(const std::filesystem::path& path, const ListOptions& options) {
  return Lister(path, options).run(path);
}

// cuobjdump derives the stem from the whole path, by the same rule as
// identifiers: "my dir/k.o" lists as "my-k.1.sm_80.cubin" (11.8, 12.4, 13.0).
// The listing applies it to the absolute path, as 12.4 and 13.0 do: run in
// "/tmp/x y", "k.o" is "x-k".
std::string listing_stem(const std::filesystem::path& path) { return identifier_stem(path.native()); }

std::string identifier_stem(std::string_view identifier) {
  std::string stem;
  bool first = true;
  while (!identifier.empty()) {
    const std::size_t space = identifier.find(' ');
    std::string_view token = identifier.substr(0, space);
    identifier = space == std::string_view::npos ? std::string_view{} : identifier.substr(space + 1);
    if (token.empty()) continue;
    if (const std::size_t slash = token.rfind('/'); slash != std::string_view::npos) token.remove_prefix(slash + 1);
    if (const std::size_t dot = token.rfind('.'); dot != std::string_view::npos) token = token.substr(0, dot);
    if (!first) stem += '-';
    stem += token;
    first = false;
  }
  return stem;
}

}  // namespace orc::inspect
