// `orchestrate inspect`, rendered: the table (and where it runs) or --json;
// warnings and problems through the one diagnostic renderer on stderr.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/table.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/inspect/verdict.hpp"
#include "orchestrator/inspect/needs.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

using app::LeafVerdicts;
using inspect::FileReport;
using nlohmann::ordered_json;
using util::Diagnostic;
using util::human_size;

// The table shows this many hex digits of the digest: enough to tell files
// apart at a glance; --json has all 64.
constexpr std::size_t k_short_digest = 16;

std::vector<std::string> sass_names_of(const std::set<arch::ComputeCapability>& ccs) {
  std::vector<std::string> out;
  for (const auto& cc : ccs) out.push_back(cc.sm());
  return out;
}

std::vector<std::string> ptx_names_of(const std::set<arch::ComputeCapability>& ccs) {
  std::vector<std::string> out;
  for (const auto& cc : ccs) out.push_back(cc.compute());
  return out;
}

std::vector<std::string> sass_names(const FileReport& r) { return sass_names_of(r.sass); }
std::vector<std::string> ptx_names(const FileReport& r) { return ptx_names_of(r.ptx); }

// The table's SASS and PTX cells: an arch found only in relocatable modules
// of a linked file is marked with a `*` (one word, so a narrow table never
// splits it), and the note below the row, starting with `*`, says what that
// means.
std::string code_cell(const std::vector<std::string>& names, const std::set<arch::ComputeCapability>& relocatable,
                      bool ptx) {
  if (names.empty()) return "-";
  std::vector<std::string> shown;
  for (const auto& name : names) {
    const bool marked = std::ranges::any_of(
        relocatable, [&](const arch::ComputeCapability& cc) { return (ptx ? cc.compute() : cc.sm()) == name; });
    shown.push_back(marked ? name + "*" : name);
  }
  return util::join(shown, " ");
}

// One note per kind held only in relocatable modules, in verification's words.
std::vector<std::string> relocatable_notes(const FileReport& r) {
  const auto only = inspect::relocatable_only_code(r);
  std::vector<std::string> out;
  if (!only.sass.empty())
    out.push_back("SASS " + util::join(sass_names_of(only.sass), ", ") + " is " +
                  std::string(inspect::relocatable_only_why(false)));
  if (!only.ptx.empty())
    out.push_back("PTX " + util::join(ptx_names_of(only.ptx), ", ") + " is " +
                  std::string(inspect::relocatable_only_why(true)));
  return out;
}

std::vector<std::string> utf8_escaped(const std::vector<std::string>& texts) {
  std::vector<std::string> out;
  for (const auto& t : texts) out.push_back(util::utf8_escaped(t));
  return out;
}

const LeafVerdicts* verdicts_for(const std::vector<LeafVerdicts>& all, const FileReport& r) {
  const auto it = std::ranges::find(all, &r, &LeafVerdicts::file);
  return it == all.end() ? nullptr : &*it;
}

// One object per fatbin container, as the runtime sees it: relocatable ones
// (cuobjdump -all lists them) are marked, and never decide a verdict.
ordered_json modules_json(const FileReport& r) {
  ordered_json list = ordered_json::array();
  for (const auto& m : r.modules) {
    ordered_json ptx = ordered_json::array();
    for (const auto& p : m.ptx) ptx.push_back({{"arch", p.arch.compute()}, {"isa", p.isa.str()}});
    std::vector<std::string> sass;
    for (const auto& cc : m.sass) sass.push_back(cc.sm());
    list.push_back({{"section", inspect::code_section_name(m.section)},
                    {"relocatable", !m.loadable()},
                    {"offset", m.offset},
                    {"size", m.size},
                    {"sass", sass},
                    {"ptx", std::move(ptx)},
                    {"lto_ir", m.lto_entries},
                    {"kernels", inspect::kernels_name(m.kernels)},
                    {"toolkit", m.toolkit ? ordered_json(m.toolkit->str()) : ordered_json(nullptr)}});
  }
  return list;
}

// What a node must provide, typed as the build report and the manifest have it.
ordered_json needs_json(const std::vector<inspect::LinkedLibrary>& needs) {
  ordered_json list = ordered_json::array();
  for (const auto& n : needs)
    list.push_back({{"library", n.library->key},
                    {"major", n.major ? ordered_json(*n.major) : ordered_json(nullptr)},
                    {"soname", util::utf8_escaped(n.soname)},
                    {"name", n.library->name}});
  return list;
}

// `needs`: the file's, for a file given (members have theirs in it).
ordered_json file_json(const FileReport& r, const std::vector<LeafVerdicts>& verdicts, bool with_verdicts,
                       const std::vector<inspect::LinkedLibrary>* needs = nullptr) {
  ordered_json j;
  j["path"] = util::utf8_escaped(r.path);
  if (r.error) {
    j["error"] = util::utf8_escaped(*r.error);
    return j;
  }
  if (needs) j["needs"] = needs_json(*needs);
  j["soname"] = r.soname.empty() ? ordered_json(nullptr) : ordered_json(util::utf8_escaped(r.soname));
  j["format"] = r.format;
  j["size"] = r.size;
  j["sha256"] = r.sha256;
  j["sass"] = sass_names(r);
  j["ptx"] = ptx_names(r);
  j["entries"] = r.entries;
  j["counts"] = {{"elf", r.elf_entries}, {"ptx", r.ptx_entries}, {"lto_ir", r.lto_entries}};
  j["compressed"] = r.compressed;
  j["modules"] = modules_json(r);
  // "sass" and "ptx" list every module's code, as cuobjdump -all does; what
  // a linked file holds only in __nv_relfatbin is named here too.
  if (const auto only = inspect::relocatable_only_code(r); !only.sass.empty() || !only.ptx.empty())
    j["relocatable_only"] = {
        {"sass", sass_names_of(only.sass)}, {"ptx", ptx_names_of(only.ptx)}, {"notes", relocatable_notes(r)}};
  else
    j["relocatable_only"] = nullptr;
  j["runtime"] = r.runtime ? ordered_json{{"major", r.runtime->major}, {"from", util::utf8_escaped(r.runtime->from)}}
                           : ordered_json(nullptr);
  if (r.runtime_code.any()) {
    const auto& rt = r.runtime_code;
    std::vector<std::string> sass, ptx;
    for (const auto& cc : rt.sass) sass.push_back(cc.sm());
    for (const auto& p : rt.ptx)
      if (std::ranges::find(ptx, p.arch.compute()) == ptx.end()) ptx.push_back(p.arch.compute());
    j["runtime_code"] = {{"sections", utf8_escaped(rt.sections)},
                         {"containers", rt.containers},
                         {"sass", sass},
                         {"ptx", ptx},
                         {"lto_ir", rt.lto_entries},
                         {"builders", utf8_escaped(rt.builders)}};
  } else {
    j["runtime_code"] = nullptr;
  }
  j["damage"] = r.damage ? ordered_json{{"offset", r.damage->offset}, {"what", util::utf8_escaped(r.damage->what)}}
                         : ordered_json(nullptr);
  if (with_verdicts) {
    ordered_json list = ordered_json::array();
    if (const LeafVerdicts* leaf = verdicts_for(verdicts, r)) {
      for (const auto& v : leaf->verdicts) {
        list.push_back({{"tier", v.gpu.tier.empty() ? ordered_json(nullptr) : ordered_json(v.gpu.tier)},
                        {"name", v.gpu.name.empty() ? ordered_json(nullptr) : ordered_json(v.gpu.name)},
                        {"cc", v.gpu.cc.dotted()},
                        {"outcome", inspect::outcome_name(v.verdict.outcome)},
                        {"decided_by", v.verdict.decided_by
                                           ? ordered_json(v.verdict.decided_by_sass ? v.verdict.decided_by->sm()
                                                                                    : v.verdict.decided_by->compute())
                                           : ordered_json(nullptr)},
                        {"detail", v.verdict.detail},
                        {"driver", v.gpu.driver ? ordered_json(v.gpu.driver->str()) : ordered_json(nullptr)},
                        {"runtime_kernels", v.runtime_kernels}});
      }
    }
    j["verdicts"] = std::move(list);
  }
  ordered_json members = ordered_json::array();
  for (const auto& m : r.members) members.push_back(file_json(m, verdicts, with_verdicts));
  j["members"] = std::move(members);
  return j;
}

std::string entry_counts(const FileReport& r) {
  if (r.entries == 0) return "-";
  std::vector<std::string> parts;
  if (r.elf_entries) parts.push_back(std::to_string(r.elf_entries) + " elf");
  if (r.ptx_entries) parts.push_back(std::to_string(r.ptx_entries) + " ptx");
  if (r.lto_entries) parts.push_back(std::to_string(r.lto_entries) + " lto");
  const std::size_t other = r.entries - r.elf_entries - r.ptx_entries - r.lto_entries;
  if (other) parts.push_back(std::to_string(other) + " other");
  return util::join(parts, ", ");
}

struct Row {
  std::string name, size, digest, entries, compressed, sass, ptx;
  std::vector<std::string> notes;  // damage, relocatable-only code, needs: each on its own line below the row
};

// Members are shown by their path inside the container, indented under it.
void add_rows(const FileReport& r, std::size_t depth, std::string_view parent, std::vector<Row>& rows) {
  std::string name = r.path;
  if (!parent.empty() && name.starts_with(parent)) {
    name = name.substr(parent.size());
    if (name.starts_with("!/"))
      name = name.substr(2);
    else if (name.starts_with(":"))
      name = name.substr(1);
  }
  const auto relocatable = inspect::relocatable_only_code(r);
  Row row{.name = std::string(2 * depth, ' ') + util::printable(name),
          .size = human_size(r.size),
          .digest = r.sha256.substr(0, k_short_digest),
          .entries = entry_counts(r),
          .compressed = r.entries == 0 ? "-" : (r.compressed ? "yes" : "no"),
          .sass = code_cell(sass_names(r), relocatable.sass, false),
          .ptx = code_cell(ptx_names(r), relocatable.ptx, true),
          .notes = {}};
  const std::string indent(2 * depth + 2, ' ');
  if (r.damage)
    row.notes.push_back(indent + "! damaged at offset " + std::to_string(r.damage->offset) + ": " +
                        util::printable(r.damage->what));
  for (const auto& note : relocatable_notes(r)) row.notes.push_back(indent + "* " + note);
  rows.push_back(std::move(row));
  for (const auto& m : r.members) add_rows(m, depth + 1, r.path, rows);
}

std::string inspect_json(const app::InspectReport& report) {
  const auto& [reports, verdicts, warnings] = std::tie(report.files, report.verdicts, report.warnings);
  ordered_json files = ordered_json::array();
  const bool with_verdicts = !verdicts.empty();
  for (std::size_t i = 0; i < reports.size(); ++i)
    files.push_back(file_json(reports[i], verdicts, with_verdicts, &report.needs.at(i)));
  ordered_json root;
  root["files"] = std::move(files);
  root["warnings"] = utf8_escaped(warnings);
  // Every name went through utf8_escaped; replacing stays as the net, so a
  // string missed there costs a U+FFFD, never the whole report.
  return root.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

std::string inspect_text(const app::InspectReport& report) {
  const auto& [reports, verdicts] = std::tie(report.files, report.verdicts);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].error) continue;
    const std::size_t at = rows.size();
    add_rows(reports[i], 0, "", rows);
    // What a node must provide, under the file's own row.
    for (const auto& n : report.needs.at(i))
      rows[at].notes.push_back("  needs " + util::printable(inspect::describe_need(n)) + ", not among the files given");
  }
  // Nothing could be read: the errors on stderr say it all.
  if (rows.empty()) return {};
  Table table({"FILE", "SIZE", "SHA256", "ENTRIES", "COMPRESSED", "SASS", "PTX"});
  for (auto& row : rows) {
    table.add_row({row.name, row.size, row.digest, row.entries, row.compressed, row.sass, row.ptx});
    for (auto& note : row.notes) table.add_note(std::move(note));
  }
  std::string out = table.render();
  if (verdicts.empty()) return out;

  out += "\nwhere it runs:\n";
  for (const auto& leaf : verdicts) {
    out += util::printable(leaf.file->path) + '\n';
    Table where;
    for (const auto& v : leaf.verdicts)
      where.add_row({v.gpu.label, std::string(inspect::outcome_name(v.verdict.outcome)), v.verdict.detail});
    out += where.render(2);
  }
  return out;
}

}  // namespace

void emit(Io& io, const app::InspectReport& report, Format format) {
  if (report.mode == app::InspectMode::list) {
    // cuobjdump's streams and exit code, untouched, so its scripts work
    // (its 255, no device code, is none of ours and passes as it is).
    io.out << report.listing.out;
    io.err << report.listing.err;
    io.exit_code = static_cast<util::ExitCode>(report.listing.exit_code);
    return;
  }
  if (format == Format::json) {
    io.out << inspect_json(report);
  } else {
    io.out << inspect_text(report);
    for (const auto& w : report.warnings)
      io.err << Diagnostic{.severity = util::Severity::warning, .message = util::printable(w)}.render();
  }
  for (const auto& d : report.problems) io.err << d.render();
  io.exit_code = report.exit_code;
}

}  // namespace orc::cli
