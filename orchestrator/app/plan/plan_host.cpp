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
  }
  if (full.ok)
    why += "; with every configured toolkit it would use CUDA " + full.toolkit->version.str() +
           ": install that toolkit here (ORCHESTRATE_HOST_TOOLKITS names extra ones) or build in a container engine";
  return why;
}

}  // namespace

PlanReport plan_on_host(const PlanReport& full, const PlanScope& scope,
                        const std::vector<site::HostToolkit>& host_toolkits) {
  const recipe::Config& config = *full.config;
  const auto usable = usable_toolkits(config, host_toolkits);
  PlanReport host_plan = full;
  if (!usable.empty()) {
    PlanScope on_host = scope;
    on_host.toolkits = usable;
    host_plan = plan(full.config, on_host);
  }
  for (std::size_t i = 0; i < host_plan.plans.size(); ++i) {
    PlanEntry& e = host_plan.plans[i];
    const PlanEntry& wanted = full.plans[i];
    if (!usable.empty() && e.ok) {
      // The plan found a toolkit among the host's, so one is installed.
      e.host =
          HostChoice{.toolkit = *site::find_host_toolkit(host_toolkits, e.toolkit->version), .instead_of = nullptr};
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
