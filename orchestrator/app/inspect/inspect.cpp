#include "orchestrator/app/inspect/inspect.hpp"

#include <algorithm>
#include <cstdio>

#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/inspect/needs.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/driver_facts.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using inspect::FileReport;
using util::Diagnostic;
using util::ExitCode;

void collect_leaves(const FileReport& r, const std::vector<TargetGpu>& targets, std::vector<LeafVerdicts>& out) {
  if (r.members.empty()) {
    if (r.entries == 0) return;
    LeafVerdicts leaf{.file = &r, .verdicts = {}};
    for (const auto& t : targets) {
      const inspect::FileVerdict v = inspect::judge_file(r, t.cc, site::driver_facts(t.driver));
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

void add_tier_targets(const InspectRequest& request, std::vector<TargetGpu>& targets) {
  if (request.tiers.empty()) return;
  const auto config = site::load_config_file(request.config, true);
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
    std::ranges::move(tier_targets(*tier), std::back_inserter(targets));
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

std::vector<TargetGpu> tier_targets(const recipe::Tier& tier, const std::optional<util::Version>& driver) {
  std::vector<TargetGpu> out;
  for (const auto& g : tier.gpus)
    out.push_back(
        {tier.name + ": " + g.label(), g.cc, driver ? driver : tier.driver, tier.name, g.given_as_cc ? "" : g.name});
  return out;
}

std::vector<LeafVerdicts> judge_all(const std::vector<FileReport>& reports, const std::vector<TargetGpu>& targets) {
  std::vector<LeafVerdicts> out;
  if (targets.empty()) return out;
  for (const auto& r : reports) collect_leaves(r, targets, out);
  return out;
}

namespace {

// Warnings for what runs but not as well as it could (JIT, partial) and for
// libraries whose own run-time kernels make "none" unproven; files with no
// device code cannot be judged, said once, so an empty verdict section is
// not mistaken for "all fine".
std::vector<std::string> verdict_warnings(const InspectReport& report, bool any_targets, bool& any_none) {
  std::vector<std::string> warnings;
  any_none = false;
  for (const auto& leaf : report.verdicts) {
    for (const auto& v : leaf.verdicts) {
      const auto outcome = v.verdict.outcome;
      if (outcome == inspect::Outcome::none && !v.runtime_kernels) any_none = true;
      if ((outcome == inspect::Outcome::none && v.runtime_kernels) || outcome == inspect::Outcome::jit ||
          outcome == inspect::Outcome::partial)
        warnings.push_back(leaf.file->path + ": " + v.gpu.label + " " + v.verdict.detail);
    }
  }
  if (any_targets)
    for (const auto& r : report.files)
      if (!r.device_code() && !r.damage && !r.error) warnings.push_back(r.path + ": holds no device code; no verdict");
  return warnings;
}

}  // namespace

InspectReport inspect(const InspectRequest& request) {
  InspectReport report;
  report.mode = request.mode;
  if (request.mode == InspectMode::list) {
    // cuobjdump's contract, untouched: its streams and its exit code (the
    // first failing file's, so a script sees the failure).
    for (const auto& path : request.paths) {
      auto listed = inspect::list_device_code(path, request.list);
      report.listing.out += listed.out;
      report.listing.err += listed.err;
      if (report.listing.exit_code == 0) report.listing.exit_code = listed.exit_code;
    }
    return report;
  }

  // Targets first: a typo in --gpu should not cost a scan of 500 MB.
  const std::vector<TargetGpu> targets = resolve_targets(request);
  report.files = inspect::inspect_files(
      request.paths,
      inspect::InspectOptions{.exact = request.exact, .threads = request.threads, .modules = !targets.empty()});
  report.verdicts = judge_all(report.files, targets);
  const auto carried = inspect::carried_sonames(report.files);
  for (const auto& r : report.files) report.needs.push_back(inspect::unmet_needs(r, carried));
  bool any_none = false;
  report.warnings = verdict_warnings(report, !targets.empty(), any_none);
  for (const auto& r : report.files) collect_problems(r, report.problems);
  // An unreadable file and damage outrank a verdict: a verdict on half the
  // input proves nothing.
  report.exit_code = !report.problems.empty() ? ExitCode::bad_input : any_none ? ExitCode::check_failed : ExitCode::ok;
  return report;
}

}  // namespace orc::app
