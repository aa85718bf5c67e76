#include "orchestrator/app/build/build_verify.hpp"

#include <algorithm>
#include <set>

#include "orchestrator/inspect/verdict.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/glob.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;
using arch::ComputeCapability;

// How many same-named files a glob that matched nothing suggests.
constexpr std::size_t k_suggestions = 3;

// " (did you mean 'a', 'b' or 'c'?)", or nothing without candidates.
std::string suggestion_clause(const std::vector<std::string>& candidates) {
  if (candidates.empty()) return {};
  std::string out = " (did you mean ";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (i > 0) out += i + 1 == candidates.size() ? " or " : ", ";
    out += "'" + candidates[i] + "'";
  }
  return out + "?)";
}

}  // namespace

std::expected<std::vector<CollectedArtifact>, std::string> collect_artifacts(const std::vector<std::string>& globs,
                                                                             const std::vector<fs::path>& roots) {
  std::vector<CollectedArtifact> out;
  for (const auto& glob : globs) {
    if (glob.empty() || glob.front() == '/' || glob.find("..") != std::string::npos)
      return std::unexpected("artifact glob '" + glob + "' must be a relative path inside the build");
    bool found = false;
    for (const auto& root : roots) {
      const auto files = util::glob_files(root, glob);
      for (const auto& rel : files) {
        const std::string name = rel.generic_string();
        if (std::ranges::none_of(out, [&](const CollectedArtifact& a) { return a.name == name; }))
          out.push_back({.name = name, .path = root / rel});
      }
      if (!files.empty()) {
        found = true;
        break;
      }
    }
    if (!found) {
      std::vector<std::string> where;
      for (const auto& r : roots) where.push_back(r.string());
      return std::unexpected("artifact glob '" + glob + "' matched no file under " + util::join(where, " or ") +
                             suggestion_clause(util::glob_near_misses(roots, glob, k_suggestions)));
    }
  }
  return out;
}

std::vector<std::string> unstorable_names(const std::vector<CollectedArtifact>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) {
    const std::string shown = util::utf8_escaped(f.name);
    if (shown != f.name)
      out.push_back("artifact '" + shown + "' has a name that is not UTF-8 (\\xNN marks each stray byte); " +
                    "a manifest names its files in UTF-8: rename it in a build step, or narrow `artifacts:` to leave " +
                    "it out");
  }
  return out;
}

Verification verify_artifacts(const arch::ArchSet& planned, const std::vector<recipe::TierGpu>& gpus,
                              const std::vector<inspect::FileReport>& reports) {
  Verification v;
  const auto& want_sass = planned.sass;
  const auto& want_ptx = planned.ptx;
  bool any_device_code = false;
  for (const auto& r : reports) {
    if (!r.device_code()) continue;
    any_device_code = true;
    // What the runtime registers, and what a linked file holds only in
    // __nv_relfatbin: listed by inspect too, marked, in the same words.
    const auto [sass, ptx] = inspect::loadable_code(r);
    const auto relocatable = inspect::relocatable_only_code(r);
    if (r.damage)
      v.errors.push_back(r.path + ": damaged at offset " + std::to_string(r.damage->offset) + ": " + r.damage->what);
    // Planned code the runtime does not register is missing, or relocatable
    // only: an error for SASS (the device link can make it), a warning for
    // PTX (it cannot; the runtime JIT-links the relocatable PTX).
    const auto require = [&](const std::set<ComputeCapability>& want, const std::set<ComputeCapability>& have,
                             const std::set<ComputeCapability>& only_relocatable, bool is_ptx) {
      for (const auto& cc : want) {
        if (have.contains(cc)) continue;
        const std::string what = r.path + ": planned " + (is_ptx ? "PTX " + cc.compute() : "SASS " + cc.sm()) + " is ";
        if (!only_relocatable.contains(cc))
          v.errors.push_back(what + "missing");
        else
          (is_ptx ? v.warnings : v.errors).push_back(what + std::string(inspect::relocatable_only_why(is_ptx)));
      }
    };
    require(want_sass, sass, relocatable.sass, false);
    require(want_ptx, ptx, relocatable.ptx, true);
    const auto unplanned = [&](const std::string& kind, const std::string& name, bool only_relocatable) {
      v.warnings.push_back(r.path + ": embeds " + kind + " " + name +
                           (only_relocatable ? " (only in relocatable device code, __nv_relfatbin)" : "") +
                           ", which the plan did not ask for");
    };
    for (const auto& cc : sass)
      if (!want_sass.contains(cc)) unplanned("SASS", cc.sm(), false);
    for (const auto& cc : relocatable.sass)
      if (!want_sass.contains(cc)) unplanned("SASS", cc.sm(), true);
    for (const auto& cc : ptx)
      if (!want_ptx.contains(cc)) unplanned("PTX", cc.compute(), false);
    for (const auto& cc : relocatable.ptx)
      if (!want_ptx.contains(cc)) unplanned("PTX", cc.compute(), true);
    for (const auto& gpu : gpus) {
      const ComputeCapability device = gpu.cc;
      const auto verdict = inspect::judge_file(r, device).verdict;
      if (verdict.outcome == inspect::Outcome::partial) {
        // A recipe's own artifact: every kernel it builds must run on the tier.
        v.errors.push_back(r.path + ": " + gpu.label() + ": " + verdict.detail);
      } else if (verdict.outcome == inspect::Outcome::none) {
        v.errors.push_back(r.path + ": " + gpu.label() +
                           " would see \"no kernel image is available for execution on the device\"");
      } else if (verdict.outcome == inspect::Outcome::jit) {
        const bool planned_native =
            std::ranges::any_of(want_sass, [&](const ComputeCapability& cc) { return cc.sass_runs_on(device); });
        if (planned_native)
          v.errors.push_back(r.path + ": " + gpu.label() + " runs only by PTX JIT, though the plan gives it SASS");
        else
          v.warnings.push_back(r.path + ": " + gpu.label() + " runs by PTX JIT (the plan gives it no SASS)");
      }
    }
  }
  if (!any_device_code) v.errors.push_back("no artifact holds device code: the build compiled no CUDA kernels");
  return v;
}

}  // namespace orc::app
