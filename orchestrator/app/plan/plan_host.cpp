// plan_on_host (plan.hpp): the plan made again with the toolkits installed
// on this host, for the host engine.
#include <algorithm>

#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

// The host's toolkits the configuration allows, major.minor, newest first.
std::vector<util::Version> usable_toolkits(const recipe::Config& config, const std::vector<site::HostToolkit>& host) {
  std::vector<util::Version> usable;
  for (const auto& t : host) {
    const util::Version v = t.version.truncated(2);
    const bool allowed = config.toolkits.empty() || std::ranges::any_of(config.toolkits, [&](const util::Version& c) {
                           return c.truncated(2) == v;
                         });
    if (allowed && std::ranges::find(usable, v) == usable.end()) usable.push_back(v);
  }
  return usable;
}

// "every build needs" for the parts every build needs, else the recipe
// line of `needs:` that names it.
std::string who_needs(const recipe::Recipe& r, compat::ToolkitPart part) {
  for (const auto& need : r.needs)
    if (need.part == part || (part == compat::ToolkitPart::cublasLt && need.part == compat::ToolkitPart::cublas))
      return need.where.file + ":" + std::to_string(need.where.line) + ":" + std::to_string(need.where.col) + " needs";
  return "every build needs";
}

// The toolkits installed here that have what `r` needs, for "which would".
std::string complete_for(const recipe::Recipe& r, const std::vector<site::HostToolkit>& host) {
  const auto needed = parts_needed(r);
  std::vector<site::HostToolkit> serving;
  for (const auto& t : host)
    if (t.inventory.lacking(needed).empty()) serving.push_back(t);
  return serving.empty() ? "none of the toolkits on this host has it all"
                         : "on this host " + site::describe_host_toolkits(serving) + " " +
                               (serving.size() == 1 ? "has" : "have") + " what it needs";
}

// Why the host cannot build `e`, and what to do about it.
std::string unservable_reason(const PlanEntry& e, const PlanEntry& full, const recipe::Config& config,
                              const std::vector<site::HostToolkit>& host, bool any_usable) {
  std::string why;
  if (host.empty()) {
    why =
        "the host engine found no CUDA toolkit (no nvcc in ORCHESTRATE_HOST_TOOLKITS, on PATH, in "
        "ORCHESTRATE_HOST_CUDA, /usr/local/cuda or /usr/local/cuda-*)";
  } else if (!any_usable) {
    std::vector<std::string> allowed;
    for (const auto& v : config.toolkits) allowed.push_back(v.str());
    why = "none of the toolkits on this host (" + site::describe_host_toolkits(host) +
          ") is in the configuration's toolkits: (" + util::join(allowed, ", ") + ")";
  } else {
    why = "the toolkits on this host (" + site::describe_host_toolkits(host) +
          ") cannot serve it: " + util::join(e.reasons, "; ");
    if (!host_shortfalls(*e.recipe, host).empty()) why += "; " + complete_for(*e.recipe, host);
  }
  if (full.ok)
    why += "; with every configured toolkit it would use CUDA " + full.toolkit->version.str() +
           ": install that toolkit here (ORCHESTRATE_HOST_TOOLKITS names extra ones) or build in a container engine";
  return why;
}

}  // namespace

std::vector<compat::ToolkitPart> parts_needed(const recipe::Recipe& r) {
  std::vector<compat::ToolkitPart> declared;
  for (const auto& need : r.needs) declared.push_back(need.part);
  return compat::parts_needed(declared);
}

std::vector<compat::ToolkitShortfall> host_shortfalls(const recipe::Recipe& r,
                                                      const std::vector<site::HostToolkit>& host) {
  const auto needed = parts_needed(r);
  std::vector<compat::ToolkitShortfall> out;
  for (const auto& t : host) {
    const util::Version minor = t.version.truncated(2);
    if (std::ranges::any_of(out, [&](const compat::ToolkitShortfall& s) { return s.toolkit == minor; })) continue;
    std::vector<std::string> trees;
    bool one_serves = false;
    for (const auto& same : host) {
      if (same.version.truncated(2) != minor) continue;
      const auto lacking = same.inventory.lacking(needed);
      if (lacking.empty()) {
        one_serves = true;
        break;
      }
      std::vector<std::string> parts;
      for (const compat::MissingPart* m : lacking) parts.push_back(m->describe() + ", which " + who_needs(r, m->part));
      trees.push_back("installed at " + same.root.string() + " without " + util::join(parts, "; "));
    }
    if (!one_serves) out.push_back({.toolkit = minor, .reason = util::join(trees, "; ")});
  }
  return out;
}

PlanReport plan_on_host(const PlanReport& full, const PlanScope& scope,
                        const std::vector<site::HostToolkit>& host_toolkits) {
  const recipe::Config& config = *full.config;
  const auto usable = usable_toolkits(config, host_toolkits);
  PlanReport host_plan = full;
  if (!usable.empty()) {
    PlanScope on_host = scope;
    on_host.toolkits = usable;
    on_host.host_toolkits = host_toolkits;
    host_plan = plan(full.config, on_host);
  }
  for (std::size_t i = 0; i < host_plan.plans.size(); ++i) {
    PlanEntry& e = host_plan.plans[i];
    const PlanEntry& wanted = full.plans[i];
    if (!usable.empty() && e.ok) {
      // The plan found a toolkit among the host's, so one is installed.
      // The plan passed over versions without a tree that has what the
      // recipe needs, so one of this version has it.
      e.host =
          HostChoice{.toolkit = *site::find_host_toolkit(host_toolkits, e.toolkit->version, parts_needed(*e.recipe)),
                     .instead_of = nullptr};
      if (wanted.ok && wanted.toolkit != e.toolkit) {
        e.host->instead_of = wanted.toolkit;
        e.warnings.push_back("the host engine builds with CUDA " + e.toolkit->version.str() + " (installed at " +
                             e.host->toolkit.root.string() + "), not the CUDA " + wanted.toolkit->version.str() +
                             " the configuration's toolkits would give: install " + wanted.toolkit->version.str() +
                             " here (ORCHESTRATE_HOST_TOOLKITS) or build in a container engine");
      }
      continue;
    }
    const std::string why = unservable_reason(e, wanted, config, host_toolkits, !usable.empty());
    e = PlanEntry{.recipe = wanted.recipe, .tier = wanted.tier};
    e.reasons = {why};
    e.host_unservable = true;
  }
  return host_plan;
}

}  // namespace orc::app
