#include "orchestrator/site/arch_coverage.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "orchestrator/cache/smoke_run.hpp"
#include "orchestrator/inspect/verdict.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::site {

namespace {

// The manifest's "sm_90" / "compute_90a" names back to CCs; a name this
// version cannot read counts as absent (it cannot vouch for a GPU).
// Each distinct CC of the tier's GPUs (without variant) with the product
// names the tier gives it; a GPU written as a CC adds no name.
std::map<arch::ComputeCapability, std::vector<std::string>> tier_ccs(const recipe::Tier& tier) {
  std::map<arch::ComputeCapability, std::vector<std::string>> out;
  for (const auto& gpu : tier.gpus) {
    auto& names = out[gpu.cc.base()];
    if (!gpu.given_as_cc && std::ranges::find(names, gpu.name) == names.end()) names.push_back(gpu.name);
  }
  return out;
}

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

}  // namespace

ArchCoverage check_arch_coverage(const cache::Manifest& manifest, const recipe::Tier& tier) {
  ArchCoverage coverage;
  bool any_device_code = false;
  for (const auto& file : manifest.files) {
    if (file.embedded_sass.empty() && file.embedded_ptx.empty()) continue;
    any_device_code = true;
    const auto sass = file.embedded_sass.cc_set();
    const auto ptx = file.embedded_ptx.cc_set();
    for (const auto* list : {&file.embedded_sass, &file.embedded_ptx})
      for (const auto& name : list->unread())
        coverage.unread.push_back(file.path + ": '" + name +
                                  "' is a target this version cannot read; it vouches for no GPU");
    for (const auto& gpu : tier.gpus) {
      const auto verdict = inspect::judge(sass, ptx, gpu.cc);
      if (verdict.outcome == inspect::Outcome::native) continue;
      if (verdict.outcome == inspect::Outcome::jit && tier.ptx != recipe::PtxPolicy::none) {
        coverage.jit.push_back(file.path + ": " + gpu.label() + " runs by JIT from " + verdict.decided_by->compute() +
                               " PTX (no " + gpu.cc.sm() + " SASS)");
        continue;
      }
      std::string problem = file.path + ": no kernel image for " + gpu.label() + " of tier '" + tier.name + "'";
      if (verdict.outcome == inspect::Outcome::jit)
        problem += " (only " + verdict.decided_by->compute() + " PTX, and the tier's ptx policy is none)";
      else
        problem += " (needs " + gpu.cc.sm() + " SASS or PTX at or below " + gpu.cc.compute() + ")";
      coverage.problems.push_back(std::move(problem));
    }
  }
  if (!any_device_code)
    coverage.problems.push_back("no file of the set embeds device code, so nothing covers tier '" + tier.name + "'");
  coverage.ok = coverage.problems.empty();
  // A refusal says what was not read: a newer version may read it as the
  // missing target.
  if (!coverage.ok) coverage.problems.insert(coverage.problems.end(), coverage.unread.begin(), coverage.unread.end());
  return coverage;
}

std::optional<recipe::Tier> built_for_tier(const cache::Manifest& manifest, std::string* why) {
  const auto say = [&](std::string text) {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  if (!manifest.built_for)
    return say("its manifest does not record the tier's GPUs (a set built before they were recorded)");
  recipe::Tier tier{.name = manifest.tier};
  bool known = false;
  for (const arch::PtxPolicy p : {arch::PtxPolicy::none, arch::PtxPolicy::highest, arch::PtxPolicy::all})
    if (recipe::ptx_policy_name(p) == manifest.built_for->ptx) {
      tier.ptx = p;
      known = true;
    }
  if (!known) return say("its manifest records PTX policy '" + manifest.built_for->ptx + "', which this version lacks");
  for (const auto& g : manifest.built_for->gpus) {
    auto cc = arch::ComputeCapability::parse(g.cc);
    if (!cc) return say("its manifest records a GPU of CC '" + g.cc + "', which this version cannot read");
    tier.gpus.push_back({.name = g.name.empty() ? g.cc : g.name, .cc = *cc, .given_as_cc = g.name.empty()});
  }
  return tier;
}

bool tier_has_cc(const recipe::Tier& tier, const arch::ComputeCapability& cc) {
  return std::ranges::any_of(tier.gpus, [&](const recipe::TierGpu& g) { return g.cc.base() == cc; });
}

std::optional<std::string> smoke_problem(const cache::Manifest& manifest, const digest::Digest& digest,
                                         const recipe::Tier& tier, const cache::TrustedKeys& trusted) {
  static const std::vector<cache::SmokeAttestation> k_no_runs;
  const auto found = manifest.smoke.find(tier.name);
  const auto& runs = found == manifest.smoke.end() ? k_no_runs : found->second;
  const digest::Digest subject = cache::smoke_subject(manifest);
  std::set<arch::ComputeCapability> passed;
  std::vector<std::string> failed, altered, ignored;
  for (const auto& run : runs) {
    std::string who = run.gpu + " (CC " + run.cc + ", driver " + run.driver + ")";
    if (!run.node.empty()) who += " on " + run.node;
    switch (cache::verify_smoke_run(run, tier.name, subject, trusted)) {
      case cache::RunSignature::not_signed:
        ignored.push_back(who + ": recorded before runs were signed by their node");
        continue;
      case cache::RunSignature::unknown_key:
        ignored.push_back(who + ": signed by key " + run.key_id + ", which this machine does not trust");
        continue;
      case cache::RunSignature::bad_signature:
        altered.push_back(who + " (key " + run.key_id + ")");
        continue;
      case cache::RunSignature::verified:
        break;
    }
    const auto cc = arch::ComputeCapability::parse(run.cc);
    if (!run.member || !cc || !tier_has_cc(tier, cc->base())) {
      ignored.push_back(who + ": not a GPU of the tier");
      continue;
    }
    if (tier.driver) {
      const auto driver = util::Version::parse(run.driver);
      if (!driver || *driver < *tier.driver) {
        ignored.push_back(who + ": below the tier's driver " + tier.driver->str());
        continue;
      }
    }
    if (run.outcome == "pass")
      passed.insert(cc->base());
    else
      failed.push_back(who + ": " + run.outcome);
  }
  const std::string set = digest.to_string();
  const std::string quoted = "'" + tier.name + "'";
  if (!altered.empty())
    return set + "'s smoke attestation for tier " + quoted +
           " holds a run that is not what its node signed: " + util::join(altered, ", ") +
           " (--require-smoke): the record was altered after that node signed it";

  std::vector<std::string> missing;
  for (const auto& [cc, names] : tier_ccs(tier))
    if (!passed.contains(cc))
      missing.push_back(cc.dotted() + (names.empty() ? "" : " (" + util::join(names, ", ") + ")"));
  if (failed.empty() && missing.empty()) return std::nullopt;
  std::string problem;
  if (runs.empty()) {
    problem =
        set + " has no smoke attestation for tier " + quoted + ", so it lacks a passing run on CC " + and_list(missing);
  } else {
    std::vector<std::string> parts;
    if (!failed.empty()) parts.push_back("is not a pass on " + util::join(failed, ", "));
    if (!missing.empty()) parts.push_back("lacks a passing run on CC " + and_list(missing));
    problem = set + "'s smoke attestation for tier " + quoted + " " + util::join(parts, " and ");
  }
  problem += " (--require-smoke" + (ignored.empty() ? "" : "; not counted: " + util::join(ignored, "; ")) + "); ";
  const std::string command = "'orchestrate smoke " + tier.name + " --artifact " + set + "'";
  if (missing.empty()) return problem + "fix it, run " + command + " on that node and push the attested set it stores";
  return problem + "run " + command + " on a node with " + (missing.size() == 1 ? "that GPU" : "those GPUs") +
         " and push the attested set it stores";
}

}  // namespace orc::site
