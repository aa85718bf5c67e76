#pragma once
// `orchestrate plan`: every recipe x tier of a configuration resolved to a
// toolkit, cuDNN, arch set and the framework's variables, or explained as
// unsatisfiable.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/flags/emit.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

struct PlanRequest {
  std::filesystem::path config;      // orchestrate.yaml
  std::vector<std::string> tiers;    // empty = every tier
  std::vector<std::string> recipes;  // empty = every recipe
  // The toolkits the resolver may choose from, in place of the
  // configuration's toolkits: (the host engine passes the ones installed
  // here that the configuration allows). nullopt = the configuration's.
  std::optional<std::vector<util::Version>> toolkits;
};

struct PlannedGpu {
  std::string name;
  std::string cc;  // "8.9"
};

struct PlanEntry {
  std::string recipe;
  std::string framework;
  std::string tier;
  bool ok = false;
  std::vector<PlannedGpu> gpus;
  std::string ptx_policy;
  std::optional<std::string> toolkit;  // "12.8"
  std::optional<std::string> cudnn;    // "9.8"
  std::optional<std::string> image;    // filled once the image catalog exists
  std::vector<std::string> sass;       // ["sm_80", ...]
  std::vector<std::string> ptx;        // ["compute_90"]
  std::vector<flags::EnvVar> env;
  std::vector<std::string> nvcc_flags;
  std::vector<std::string> reasons;
  std::vector<std::string> warnings;
  std::vector<std::vector<std::string>> split;  // for unsatisfiable plans: tier split that resolves
  bool host_unservable = false;                 // satisfiable in general; not with the host engine's toolkits
};

struct PlanReport {
  std::vector<PlanEntry> plans;
  std::vector<util::Diagnostic> config_warnings;
  bool all_ok() const;
};

// Throws util::Failure (bad_input) for an invalid configuration or an unknown
// tier/recipe name.
PlanReport plan(const PlanRequest& request);

std::string render_plan_json(const PlanReport& report);
// With `explain`, each plan also lists its reasons (why this toolkit, why
// not the newer ones).
std::string render_plan_text(const PlanReport& report, bool explain = false);

}  // namespace orc::app
