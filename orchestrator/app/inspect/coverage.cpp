#include "orchestrator/app/inspect/coverage.hpp"

#include <algorithm>
#include <charconv>
#include <map>

#include "orchestrator/recipe/config.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/driver_facts.hpp"
#include "orchestrator/site/trust.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

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
// The configuration read, for the sets' tiers; nullopt when there is none.
std::optional<recipe::Config> default_tiers(InspectRequest& request) {
  if (!request.gpus.empty() || !request.ccs.empty() || !request.tiers.empty()) return std::nullopt;
  const auto path = request.config.empty() ? site::locate_config("") : request.config;
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return std::nullopt;
  auto config = site::load_config_file(path, false);
  if (!config) return std::nullopt;
  request.config = path;
  for (const auto& t : config->tiers) request.tiers.push_back(t.name);
  return config;
}

// The cell of `lib` on `gpu`; the driver is the cause when the file runs
// (natively, by JIT or in part) as far as its code goes, with no driver named.
CoverageCell judge_cell(const inspect::FileReport& lib, const TargetGpu& gpu,
                        const std::optional<util::Version>& driver) {
  const auto facts = site::driver_facts(gpu.driver ? gpu.driver : driver);
  const auto v = inspect::judge_file(lib, gpu.cc, facts);
  CoverageCell cell{.outcome = v.verdict.outcome,
                    .cause = Cause::other,
                    .runtime_kernels = v.runtime_kernels,
                    .decided_by = {},
                    .why = v.verdict.detail};
  if (v.verdict.decided_by)
    cell.decided_by = v.verdict.decided_by_sass ? v.verdict.decided_by->sm() : v.verdict.decided_by->compute();
  using inspect::Outcome;
  switch (cell.outcome) {
    case Outcome::native:
      cell.cause = Cause::runs;
      break;
    case Outcome::jit:
      cell.cause = Cause::jit;
      break;
    case Outcome::none:
    case Outcome::partial: {
      if (cell.label() == "run-time") break;
      if (!facts.driver) {
        cell.cause = Cause::missing_code;
        break;
      }
      const auto code = inspect::judge_file(lib, gpu.cc, site::driver_facts(std::nullopt)).verdict;
      const bool better = code.outcome == Outcome::native || code.outcome == Outcome::jit ||
                          (code.outcome == Outcome::partial && cell.outcome == Outcome::none);
      cell.cause = better ? Cause::driver : Cause::missing_code;
      // The driver's reason came first; the code's is the one a newer driver leaves.
      if (!better && code.detail != cell.why) cell.why += "; a newer driver would not help: " + code.detail;
      break;
    }
    default:
      break;
  }
  return cell;
}

// One table: `libs` against `gpus`; true in `any_none` when a cell is none.
CoverageTier judge_table(std::string name, std::optional<util::Version> driver, std::vector<TargetGpu> gpus,
                         const std::vector<const inspect::FileReport*>& libs, bool& any_none) {
  CoverageTier tier{
      .name = std::move(name), .set = {}, .driver = std::move(driver), .gpus = std::move(gpus), .rows = {}};
  for (const auto* lib : libs) {
    const auto code = inspect::loadable_code(*lib);
    CoverageRow row{
        .path = lib->path, .sass = arch::ArchList::sass(code.sass), .ptx = arch::ArchList::ptx(code.ptx), .cells = {}};
    for (const auto& gpu : tier.gpus) {
      CoverageCell cell = judge_cell(*lib, gpu, tier.driver);
      if (cell.outcome == inspect::Outcome::none && !cell.runtime_kernels) any_none = true;
      row.cells.push_back(std::move(cell));
    }
    tier.rows.push_back(std::move(row));
  }
  return tier;
}

// The tables of every tier in `targets` over `libs`, in the targets' order.
void judge_every_tier(ImageReport& report, const std::vector<TargetGpu>& targets,
                      const std::vector<const inspect::FileReport*>& libs, bool& any_none) {
  std::vector<std::pair<std::string, std::vector<TargetGpu>>> groups;
  for (const auto& t : targets) {
    const std::string name = t.tier.empty() ? "GPUs asked for" : t.tier;
    auto it = std::ranges::find_if(groups, [&](const auto& g) { return g.first == name; });
    if (it == groups.end()) it = groups.emplace(groups.end(), name, std::vector<TargetGpu>{});
    it->second.push_back(t);
  }
  for (auto& [name, gpus] : groups) {
    const auto driver = gpus.front().driver;
    report.tiers.push_back(judge_table(name, driver, std::move(gpus), libs, any_none));
  }
}

// Per set: each set's files against its own tier, then the files outside
// the sets (or in a set without a tier) against every tier of `targets`.
void judge_per_set(ImageReport& report, const InspectRequest& request, const std::vector<TargetGpu>& targets,
                   const std::vector<const inspect::FileReport*>& libs, bool& any_none) {
  std::optional<util::Version> driver;
  if (!request.driver.empty())
    if (auto v = util::Version::parse(request.driver)) driver = *v;  // resolve_targets checked it
  std::vector<const inspect::FileReport*> plain = libs;
  for (std::size_t i = 0; i < report.sets.size(); ++i) {
    const FetchedSet& set = report.sets[i];
    if (!set.judged) continue;
    std::vector<const inspect::FileReport*> own;
    std::erase_if(plain, [&](const inspect::FileReport* lib) {
      if (!lib->path.starts_with(set.prefix)) return false;
      own.push_back(lib);
      return true;
    });
    report.tiers.push_back(judge_table(set.judged->name, driver ? driver : set.judged->driver,
                                       tier_targets(*set.judged, driver), own, any_none));
    report.tiers.back().set = i;
    if (own.empty())
      report.warnings.push_back(set.dir + ": the set holds no device code: nothing to judge against tier '" +
                                set.judged->name + "'");
  }
  if (plain.empty()) return;
  judge_every_tier(report, targets, plain, any_none);
  if (!targets.empty()) return;
  // A set without a tier, with nothing else to judge it by, proves nothing.
  std::size_t outside = plain.size();
  for (const auto& set : report.sets) {
    const auto n = std::ranges::count_if(plain, [&](const auto* lib) { return lib->path.starts_with(set.prefix); });
    outside -= static_cast<std::size_t>(n);
    if (set.judged || n == 0) continue;
    any_none = true;
    report.warnings.push_back(set.dir + ": not judged: " + set.why +
                              "; give the site's configuration (-f) or name the GPUs (--tier, --gpu, --cc)");
  }
  if (outside > 0)
    report.warnings.push_back(std::to_string(outside) + (outside == 1 ? " file" : " files") +
                              " with device code outside the fetched sets, not judged: no configuration names a tier");
}

}  // namespace

std::string_view cause_name(Cause c) {
  switch (c) {
    case Cause::runs:
      return "runs";
    case Cause::jit:
      return "jit";
    case Cause::driver:
      return "driver";
    case Cause::missing_code:
      return "missing-code";
    case Cause::other:
      break;
  }
  return "other";
}

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
  const bool asked = !request.gpus.empty() || !request.ccs.empty() || !request.tiers.empty();
  const auto config = default_tiers(request);
  // Targets first: a typo in --tier should not cost a scan of 5 GB.
  const std::vector<TargetGpu> targets = resolve_targets(request);
  ImageReport report;
  if (!asked && request.set_tiers == SetTiers::own && source.kind == ImageSourceKind::directory &&
      holds_fetched_sets(source.directory)) {
    const cache::TrustedKeys trusted = site::trusted_keys(config ? &*config : nullptr);
    report.sets = find_fetched_sets(source.directory, config ? &*config : nullptr, trusted);
    if (config) report.config = request.config;
  }
  report.image =
      scan_image(source, inspect::InspectOptions{.exact = request.exact, .threads = request.threads, .modules = true});
  const auto& files = report.image.content.files;

  // The matrix: one table per tier (or per set), GPUs as columns, libraries as rows.
  std::vector<const inspect::FileReport*> libs;
  for (const auto& f : files) leaves(f, libs);
  bool any_none = false;
  if (report.sets.empty())
    judge_every_tier(report, targets, libs, any_none);
  else
    judge_per_set(report, request, targets, libs, any_none);

  const auto& content = report.image.content;
  report.bom = inspect::bill_of_materials(content);
  // The cudart the image bundles, in words, and its major read once from
  // its version ("12" of "12.4.127~12.4.1-1", a Debian package's).
  std::optional<int> bundled_major;
  std::string bundled;
  for (const auto& c : report.bom)
    if (c.key == "cudart" && !c.version.empty()) {
      bundled = c.version + " (" + c.source + ")";
      int major = 0;
      const char* end = c.version.data() + c.version.size();
      const auto [at, ec] = std::from_chars(c.version.data(), end, major);
      bundled_major.reset();
      if (ec == std::errc() && (at == end || *at == '.')) bundled_major = major;
    }
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
    if (bundled_major == major) need.bundled = bundled;
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
