#include "orchestrator/app/inspect/coverage.hpp"

#include <algorithm>
#include <map>

#include "orchestrator/recipe/config.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/driver_facts.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

std::string names(const std::set<arch::ComputeCapability>& set, bool sass) {
  std::vector<std::string> out;
  for (const auto& cc : set) out.push_back(sass ? cc.sm() : cc.compute());
  return util::join(out, " ");
}

void leaves(const inspect::FileReport& r, std::vector<const inspect::FileReport*>& out) {
  if (r.members.empty()) {
    // An object file inside a package is for a link, not for the GPU.
    if (r.entries > 0 && !r.object) out.push_back(&r);
    return;
  }
  for (const auto& m : r.members) leaves(m, out);
}

void damaged(const inspect::FileReport& r, std::vector<std::string>& out) {
  if (r.damage)
    out.push_back(r.path + ": damaged at offset " + std::to_string(r.damage->offset) + ": " + r.damage->what);
  if (r.error) out.push_back(r.path + ": " + *r.error);
  for (const auto& m : r.members) damaged(m, out);
}

// With nothing asked: every tier of the configuration, when there is one.
void default_tiers(InspectRequest& request) {
  if (!request.gpus.empty() || !request.ccs.empty() || !request.tiers.empty()) return;
  const auto path = request.config.empty() ? site::locate_config("") : request.config;
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return;
  const auto config = site::load_config_file(path, false);
  if (!config) return;
  request.config = path;
  for (const auto& t : config->tiers) request.tiers.push_back(t.name);
}

}  // namespace

std::string CoverageCell::label() const {
  if (outcome == inspect::Outcome::none && runtime_kernels) return "run-time";
  if (outcome == inspect::Outcome::no_kernels) return "no-kernels";
  return std::string(inspect::outcome_name(outcome));
}

std::size_t CoverageTier::count(inspect::Outcome o, bool runtime) const {
  std::size_t n = 0;
  for (const auto& r : rows)
    for (const auto& c : r.cells)
      if (c.outcome == o && (o != inspect::Outcome::none || c.runtime_kernels == runtime)) ++n;
  return n;
}

ImageReport cover_image(const InspectRequest& given, const ImageSource& source) {
  InspectRequest request = given;
  default_tiers(request);
  // Targets first: a typo in --tier should not cost a scan of 5 GB.
  const std::vector<TargetGpu> targets = resolve_targets(request);
  ImageReport report;
  report.image =
      scan_image(source, inspect::InspectOptions{.exact = request.exact, .threads = request.threads, .modules = true});
  const auto& files = report.image.content.files;

  // The matrix: one table per tier, GPUs as columns, libraries as rows.
  std::map<std::string, std::size_t> tier_at;
  for (const auto& t : targets) {
    const std::string name = t.tier.empty() ? "GPUs asked for" : t.tier;
    auto [it, added] = tier_at.try_emplace(name, report.tiers.size());
    if (added) report.tiers.push_back(CoverageTier{.name = name, .driver = t.driver, .gpus = {}, .rows = {}});
    report.tiers[it->second].gpus.push_back(t);
  }
  std::vector<const inspect::FileReport*> libs;
  for (const auto& f : files) leaves(f, libs);
  bool any_none = false;
  for (auto& tier : report.tiers) {
    for (const auto* lib : libs) {
      const auto code = inspect::loadable_code(*lib);
      CoverageRow row{.path = lib->path, .sass = names(code.sass, true), .ptx = names(code.ptx, false), .cells = {}};
      for (const auto& gpu : tier.gpus) {
        const auto v = inspect::judge_file(*lib, gpu.cc, site::driver_facts(gpu.driver ? gpu.driver : tier.driver));
        CoverageCell cell{.outcome = v.verdict.outcome,
                          .runtime_kernels = v.runtime_kernels,
                          .decided_by = {},
                          .why = v.verdict.detail};
        if (v.verdict.decided_by)
          cell.decided_by = v.verdict.decided_by_sass ? v.verdict.decided_by->sm() : v.verdict.decided_by->compute();
        if (cell.outcome == inspect::Outcome::none && !cell.runtime_kernels) any_none = true;
        row.cells.push_back(std::move(cell));
      }
      tier.rows.push_back(std::move(row));
    }
  }

  const auto& content = report.image.content;
  report.bom = inspect::bill_of_materials(content);
  std::string bundled;
  for (const auto& c : report.bom)
    if (c.key == "cudart" && !c.version.empty()) bundled = c.version + " (" + c.source + ")";
  std::map<int, RuntimeNeed> needs;
  std::vector<const inspect::FileReport*> all;
  for (const auto& f : files) {
    all.push_back(&f);
    for (const auto& m : f.members) all.push_back(&m);
  }
  for (const auto* f : all) {
    if (!f->runtime) continue;
    auto& need = needs[f->runtime->major];
    need.major = f->runtime->major;
    need.files.push_back(f->path + " (" + f->runtime->from + ")");
  }
  const auto facts = site::driver_facts(std::nullopt);
  for (auto& [major, need] : needs) {
    const std::string m = std::to_string(major);
    if (bundled.starts_with(m + ".") || bundled.starts_with(m + " ")) need.bundled = bundled;
    if (facts.driver_for_runtime) need.min_driver = facts.driver_for_runtime(major);
    report.runtime.push_back(std::move(need));
  }
  // What the image holds, by base name: the loader finds a library by its
  // soname (a link to it counts, unless it leads nowhere in the image; a
  // library's own DT_SONAME too).
  auto carried = inspect::carried_sonames(files);
  for (const auto& p : content.paths)
    if (!content.dangling.contains(p)) carried.emplace(p.substr(p.rfind('/') + 1));
  report.missing = inspect::set_needs(files, carried);
  for (const auto& c : report.bom)
    if (c.warning) report.warnings.push_back(c.name + ": " + c.note);
  for (const auto& h : content.hidden)
    report.warnings.push_back(h + ": deleted or replaced by a later layer; not counted");
  for (const auto& [link, target] : content.dangling)
    report.warnings.push_back(link + ": a symbolic link to '" + target +
                              "', which leads to no file in the image: not counted as a library the image carries");
  for (const auto& u : content.unread) report.warnings.push_back(u);
  if (libs.empty()) report.warnings.push_back("the image holds no device code: no library to judge");
  for (const auto& f : files) damaged(f, report.damaged);
  report.exit_code = !report.damaged.empty() ? util::ExitCode::bad_input
                     : any_none              ? util::ExitCode::check_failed
                                             : util::ExitCode::ok;
  return report;
}

}  // namespace orc::app
