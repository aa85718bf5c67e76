#include "orchestrator/app/arch_coverage.hpp"

#include <set>

#include "orchestrator/inspect/verdict.hpp"

namespace orc::app {

namespace {

// The manifest's "sm_90" / "compute_90a" names back to CCs; a name this
// version cannot read counts as absent (it cannot vouch for a GPU).
std::set<arch::ComputeCapability> parse_all(const std::vector<std::string>& names) {
  std::set<arch::ComputeCapability> out;
  for (const auto& name : names)
    if (auto cc = arch::ComputeCapability::parse(name)) out.insert(*cc);
  return out;
}

std::string gpu_label(const recipe::TierGpu& gpu) {
  return gpu.given_as_cc ? "CC " + gpu.cc.dotted() : gpu.name + " (" + gpu.cc.dotted() + ")";
}

}  // namespace

ArchCoverage check_arch_coverage(const cache::Manifest& manifest, const recipe::Tier& tier) {
  ArchCoverage coverage;
  bool any_device_code = false;
  for (const auto& file : manifest.files) {
    if (file.embedded_sass.empty() && file.embedded_ptx.empty()) continue;
    any_device_code = true;
    const auto sass = parse_all(file.embedded_sass);
    const auto ptx = parse_all(file.embedded_ptx);
    for (const auto& gpu : tier.gpus) {
      const auto verdict = inspect::judge(sass, ptx, gpu.cc);
      if (verdict.outcome == inspect::Outcome::native) continue;
      if (verdict.outcome == inspect::Outcome::jit && tier.ptx != recipe::PtxPolicy::none) {
        coverage.jit.push_back(file.path + ": " + gpu_label(gpu) + " runs by JIT from " +
                               verdict.decided_by->compute() + " PTX (no " + gpu.cc.sm() + " SASS)");
        continue;
      }
      std::string problem = file.path + ": no kernel image for " + gpu_label(gpu) + " of tier '" + tier.name + "'";
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
  return coverage;
}

std::string smoke_problem(const cache::Manifest& manifest, const std::string& manifest_hex, const std::string& tier) {
  const std::string how = "run 'orchestrate smoke " + tier + " --artifact sha256:" + manifest_hex + "' on a node of " +
                          tier + ", then push the attested set it stores";
  const auto found = manifest.smoke.find(tier);
  if (found == manifest.smoke.end() || found->second.empty())
    return "sha256:" + manifest_hex + " has no smoke attestation for tier " + tier + " (--require-smoke): " + how;
  std::vector<std::string> failed;
  for (const auto& a : found->second)
    if (a.outcome != "pass") failed.push_back(a.gpu + " (CC " + a.cc + ", driver " + a.driver + "): " + a.outcome);
  if (failed.empty()) return {};
  std::string list;
  for (const auto& f : failed) list += (list.empty() ? "" : ", ") + f;
  return "sha256:" + manifest_hex + "'s smoke attestation for tier " + tier + " is not a pass on " + list +
         " (--require-smoke): fix it and " + how;
}

}  // namespace orc::app
