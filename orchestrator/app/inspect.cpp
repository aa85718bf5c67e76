#include "orchestrator/app/inspect.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "orchestrator/app/driver_facts.hpp"
#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using inspect::FileReport;
using nlohmann::ordered_json;
using util::Diagnostic;
using util::ExitCode;

// The table shows this many hex digits of the digest: enough to tell files
// apart at a glance; --json has all 64.
constexpr std::size_t k_short_digest = 16;

std::vector<std::string> sass_names(const FileReport& r) {
  std::vector<std::string> out;
  for (const auto& cc : r.sass) out.push_back(cc.sm());
  return out;
}

std::vector<std::string> ptx_names(const FileReport& r) {
  std::vector<std::string> out;
  for (const auto& cc : r.ptx) out.push_back(cc.compute());
  return out;
}

void collect_leaves(const FileReport& r, const std::vector<TargetGpu>& targets, std::vector<LeafVerdicts>& out) {
  if (r.members.empty()) {
    if (r.entries == 0) return;
    LeafVerdicts leaf{.file = &r, .verdicts = {}};
    for (const auto& t : targets) {
      const inspect::FileVerdict v = inspect::judge_file(r, t.cc, driver_facts(t.driver));
      leaf.verdicts.push_back({t, v.verdict, v.runtime_kernels});
    }
    out.push_back(std::move(leaf));
    return;
  }
  for (const auto& m : r.members) collect_leaves(m, targets, out);
}

// Files that could not be read and damage found in the others, for stderr:
// names and what libarchive said about them are untrusted text.
void collect_problems(const FileReport& r, std::vector<Diagnostic>& out) {
  if (r.error)
    out.push_back(Diagnostic{.where = {.file = util::printable(r.path)}, .message = util::printable(*r.error)});
  if (r.damage) {
    char offset[32];
    std::snprintf(offset, sizeof offset, "0x%llx", static_cast<unsigned long long>(r.damage->offset));
    out.push_back(Diagnostic{.where = {.file = util::printable(r.path)},
                             .message = "damaged at offset " + std::to_string(r.damage->offset) + " (" + offset +
                                        "): " + util::printable(r.damage->what) + "; reported what came before it"});
  }
  for (const auto& m : r.members) collect_problems(m, out);
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

ordered_json file_json(const FileReport& r, const std::vector<LeafVerdicts>& verdicts, bool with_verdicts) {
  ordered_json j;
  j["path"] = util::utf8_escaped(r.path);
  if (r.error) {
    j["error"] = util::utf8_escaped(*r.error);
    return j;
  }
  j["format"] = r.format;
  j["size"] = r.size;
  j["sha256"] = r.sha256;
  j["sass"] = sass_names(r);
  j["ptx"] = ptx_names(r);
  j["entries"] = r.entries;
  j["counts"] = {{"elf", r.elf_entries}, {"ptx", r.ptx_entries}, {"lto_ir", r.lto_entries}};
  j["compressed"] = r.compressed;
  j["modules"] = modules_json(r);
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

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
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
  std::string note;  // damage, shown on its own line below the row
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
  const auto sass = sass_names(r), ptx = ptx_names(r);
  Row row{.name = std::string(2 * depth, ' ') + util::printable(name),
          .size = human_size(r.size),
          .digest = r.sha256.substr(0, k_short_digest),
          .entries = entry_counts(r),
          .compressed = r.entries == 0 ? "-" : (r.compressed ? "yes" : "no"),
          .sass = sass.empty() ? "-" : util::join(sass, " "),
          .ptx = ptx.empty() ? "-" : util::join(ptx, " "),
          .note = {}};
  if (r.damage)
    row.note = std::string(2 * depth + 2, ' ') + "! damaged at offset " + std::to_string(r.damage->offset) + ": " +
               util::printable(r.damage->what);
  rows.push_back(std::move(row));
  for (const auto& m : r.members) add_rows(m, depth + 1, r.path, rows);
}

void add_tier_targets(const InspectRequest& request, std::vector<TargetGpu>& targets) {
  if (request.tiers.empty()) return;
  auto config = recipe::load_config(request.config);
  if (!config) throw util::Failure(ExitCode::bad_input, std::move(config.error()));
  std::vector<std::string> names;
  for (const auto& t : config->tiers) names.push_back(t.name);
  std::vector<Diagnostic> errors;
  for (const auto& name : request.tiers) {
    const recipe::Tier* tier = config->find_tier(name);
    if (!tier) {
      errors.push_back(Diagnostic{.message = "no tier '" + name + "' in " + request.config.string(),
                                  .suggestion = util::did_you_mean(name, names)});
      continue;
    }
    for (const auto& g : tier->gpus) {
      const std::string who = g.given_as_cc ? "CC " + g.cc.dotted() : g.name + " (" + g.cc.dotted() + ")";
      targets.push_back({tier->name + ": " + who, g.cc, tier->driver, tier->name, g.given_as_cc ? "" : g.name});
    }
  }
  if (!errors.empty()) throw util::Failure(ExitCode::bad_input, std::move(errors));
}

}  // namespace

std::vector<TargetGpu> resolve_targets(const InspectRequest& request) {
  std::vector<TargetGpu> targets;
  std::vector<Diagnostic> errors;
  for (const auto& name : request.gpus) {
    auto gpu = arch::find_gpu(name);
    if (!gpu) {
      errors.push_back(Diagnostic{.message = gpu.error().message, .suggestion = gpu.error().suggestion});
      continue;
    }
    targets.push_back(
        {std::string(gpu->name) + " (" + gpu->cc.dotted() + ")", gpu->cc, {}, {}, std::string(gpu->name)});
  }
  for (const auto& text : request.ccs) {
    auto cc = arch::ComputeCapability::parse(text);
    if (!cc) {
      errors.push_back(Diagnostic{.message = "--cc " + cc.error()});
      continue;
    }
    // A GPU is a plain CC; "9.0a" names a compile target, not a device.
    if (cc->variant() != arch::Variant::none) {
      errors.push_back(Diagnostic{.message = "--cc '" + text + "': a GPU's compute capability has no 'a'/'f' suffix",
                                  .suggestion = cc->base().dotted()});
      continue;
    }
    targets.push_back({"CC " + cc->dotted(), *cc, {}});
  }
  std::optional<util::Version> driver;
  if (!request.driver.empty()) {
    auto v = util::Version::parse(request.driver);
    if (!v || v->major() < 100)
      errors.push_back(
          Diagnostic{.message = "--driver '" + request.driver +
                                "' is not a driver version: give it as nvidia-smi prints it, e.g. 580.65.06"});
    else
      driver = *v;
  }
  if (!errors.empty()) throw util::Failure(ExitCode::bad_input, std::move(errors));
  add_tier_targets(request, targets);
  if (driver)
    for (auto& t : targets) t.driver = driver;
  return targets;
}

std::vector<LeafVerdicts> judge_all(const std::vector<FileReport>& reports, const std::vector<TargetGpu>& targets) {
  std::vector<LeafVerdicts> out;
  if (targets.empty()) return out;
  for (const auto& r : reports) collect_leaves(r, targets, out);
  return out;
}

std::string render_inspect_json(const std::vector<FileReport>& reports, const std::vector<LeafVerdicts>& verdicts,
                                const std::vector<std::string>& warnings) {
  ordered_json files = ordered_json::array();
  const bool with_verdicts = !verdicts.empty();
  for (const auto& r : reports) files.push_back(file_json(r, verdicts, with_verdicts));
  ordered_json root;
  root["files"] = std::move(files);
  root["warnings"] = utf8_escaped(warnings);
  // Every name went through utf8_escaped; replacing stays as the net, so a
  // string missed there costs a U+FFFD, never the whole report.
  return root.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

std::string render_inspect_text(const std::vector<FileReport>& reports, const std::vector<LeafVerdicts>& verdicts) {
  std::vector<Row> rows{{"FILE", "SIZE", "SHA256", "ENTRIES", "COMPRESSED", "SASS", "PTX", ""}};
  for (const auto& r : reports)
    if (!r.error) add_rows(r, 0, "", rows);
  // Nothing could be read: the errors on stderr say it all.
  if (rows.size() == 1) return {};
  std::size_t w_name = 0, w_size = 0, w_digest = 0, w_entries = 0, w_compressed = 0, w_sass = 0;
  for (const auto& row : rows) {
    w_name = std::max(w_name, row.name.size());
    w_size = std::max(w_size, row.size.size());
    w_digest = std::max(w_digest, row.digest.size());
    w_entries = std::max(w_entries, row.entries.size());
    w_compressed = std::max(w_compressed, row.compressed.size());
    w_sass = std::max(w_sass, row.sass.size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = pad(row.name, w_name + 2) + pad(row.size, w_size + 2) + pad(row.digest, w_digest + 2) +
                       pad(row.entries, w_entries + 2) + pad(row.compressed, w_compressed + 2) +
                       pad(row.sass, w_sass + 2) + row.ptx;
    line.erase(line.find_last_not_of(' ') + 1);  // the indentation of members stays
    out += line + '\n';
    if (!row.note.empty()) out += row.note + '\n';
  }
  if (verdicts.empty()) return out;

  out += "\nwhere it runs:\n";
  for (const auto& leaf : verdicts) {
    out += util::printable(leaf.file->path) + '\n';
    std::size_t w_gpu = 0;
    for (const auto& v : leaf.verdicts) w_gpu = std::max(w_gpu, v.gpu.label.size());
    for (const auto& v : leaf.verdicts)
      out += "  " + pad(v.gpu.label, w_gpu + 2) + pad(std::string(inspect::outcome_name(v.verdict.outcome)), 8) +
             v.verdict.detail + '\n';
  }
  return out;
}

InspectOutput inspect(const InspectRequest& request) {
  InspectOutput output;
  if (request.mode == InspectMode::list) {
    // cuobjdump's contract, untouched: its streams and its exit code (the
    // first failing file's, so a script sees the failure).
    for (const auto& path : request.paths) {
      auto listed = inspect::list_device_code(path, request.list);
      output.out += listed.out;
      output.err += listed.err;
      if (output.exit_code == 0) output.exit_code = listed.exit_code;
    }
    return output;
  }

  // Targets first: a typo in --gpu should not cost a scan of 500 MB.
  const std::vector<TargetGpu> targets = resolve_targets(request);
  const auto reports = inspect::inspect_files(
      request.paths,
      inspect::InspectOptions{.exact = request.exact, .threads = request.threads, .modules = !targets.empty()});
  const auto verdicts = judge_all(reports, targets);

  std::vector<std::string> warnings;
  bool any_none = false;
  for (const auto& leaf : verdicts) {
    for (const auto& v : leaf.verdicts) {
      if (v.verdict.outcome == inspect::Outcome::none && !v.runtime_kernels) any_none = true;
      if (v.verdict.outcome == inspect::Outcome::none && v.runtime_kernels)
        warnings.push_back(leaf.file->path + ": " + v.gpu.label + " " + v.verdict.detail);
      if (v.verdict.outcome == inspect::Outcome::jit || v.verdict.outcome == inspect::Outcome::partial)
        warnings.push_back(leaf.file->path + ": " + v.gpu.label + " " + v.verdict.detail);
    }
  }
  // Files with no device code cannot be judged; said once, so an empty
  // verdict section is not mistaken for "all fine".
  if (!targets.empty()) {
    for (const auto& r : reports)
      if (!r.device_code() && !r.damage && !r.error) warnings.push_back(r.path + ": holds no device code; no verdict");
  }

  std::vector<Diagnostic> problems;
  for (const auto& r : reports) collect_problems(r, problems);

  if (request.json) {
    output.out = render_inspect_json(reports, verdicts, warnings);
  } else {
    output.out = render_inspect_text(reports, verdicts);
    for (const auto& w : warnings)
      output.err += Diagnostic{.severity = util::Severity::warning, .message = util::printable(w)}.render();
  }
  for (const auto& d : problems) output.err += d.render();
  // An unreadable file and damage outrank a verdict: a verdict on half the
  // input proves nothing.
  output.exit_code = !problems.empty() ? static_cast<int>(ExitCode::bad_input)
                     : any_none        ? static_cast<int>(ExitCode::check_failed)
                                       : 0;
  return output;
}

}  // namespace orc::app
