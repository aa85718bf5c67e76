#include "orchestrator/site/config_path.hpp"

#include <cstdlib>
#include <system_error>

#include "orchestrator/compat/driver.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::site {

namespace {

constexpr const char* k_last_resort = "recipes/orchestrate.yaml";

// Where locate_config looked when it fell through to its last resort and
// that is missing too: every place, and what to do.
std::string nothing_found() {
  return std::string("cannot read ./") + k_last_resort +
         ": no such file. Without -f, orchestrate reads $ORCHESTRATE_CONFIG, else ./orchestrate.yaml, else ./" +
         k_last_resort +
         ", and none of them is here: give -f FILE or set ORCHESTRATE_CONFIG=FILE (a node that "
         "only fetches needs the site's orchestrate.yaml for its tiers, remote and trusted keys)";
}

// A tier's `driver:` before the first branch or past the last branch that
// runs one of its GPUs: the nodes cannot run that GPU at all, whatever is
// built for it.
std::vector<util::Diagnostic> dropped_by_driver(const recipe::Config& config) {
  std::vector<util::Diagnostic> errors;
  for (const auto& tier : config.tiers) {
    if (!tier.driver) continue;
    for (const auto& gpu : tier.gpus) {
      if (const auto first = compat::first_driver_branch(gpu.cc); first && tier.driver->major() < first->branch)
        errors.push_back(util::Diagnostic{
            .where = gpu.where,
            .message = "tier " + tier.name + ": driver " + tier.driver->str() + " cannot run " + gpu.label() +
                       ": the first driver branch that runs CC " + gpu.cc.dotted() + " GPUs is R" +
                       std::to_string(first->branch) + " (" + std::string(first->first) + "; " +
                       std::string(first->source) + "): give the tier a driver of R" + std::to_string(first->branch) +
                       " or newer"});
      const auto last = compat::last_driver_branch(gpu.cc);
      if (!last || tier.driver->major() <= *last) continue;
      errors.push_back(
          util::Diagnostic{.where = gpu.where,
                           .message = "tier " + tier.name + ": driver " + tier.driver->str() + " no longer runs " +
                                      gpu.label() + "; the last driver branch that does is R" + std::to_string(*last) +
                                      " (NVIDIA's driver and architecture matrix): give it a tier whose driver is R" +
                                      std::to_string(*last) + " or older"});
    }
  }
  return errors;
}

}  // namespace

std::filesystem::path locate_config(const std::string& given) {
  if (!given.empty()) return given;
  if (auto env = util::env_get("ORCHESTRATE_CONFIG")) return *env;
  if (std::filesystem::exists("orchestrate.yaml")) return "orchestrate.yaml";
  return k_last_resort;
}

std::optional<recipe::Config> load_config_file(const std::filesystem::path& file, bool required) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(file, ec);
  if (!required && !exists) return std::nullopt;
  // The last resort of locate_config, and nothing said to read it.
  if (!exists && file == k_last_resort && !util::env_get("ORCHESTRATE_CONFIG") &&
      !std::filesystem::exists("orchestrate.yaml", ec))
    throw util::Failure(util::ExitCode::bad_input, nothing_found());
  auto config = recipe::load_config(file);
  if (!config) throw util::Failure(util::ExitCode::bad_input, std::move(config.error()));
  if (auto errors = dropped_by_driver(*config); !errors.empty())
    throw util::Failure(util::ExitCode::bad_input, std::move(errors));
  return std::move(*config);
}

const recipe::Tier& tier_or_fail(const recipe::Config& config, const std::string& name) {
  if (const recipe::Tier* tier = config.find_tier(name)) return *tier;
  std::vector<std::string> names;
  for (const auto& t : config.tiers) names.push_back(t.name);
  util::fail_input(util::SourceLocation{.file = config.file.string()}, "unknown tier '" + name + "'",
                   util::did_you_mean(name, names));
}

const recipe::Recipe& recipe_or_fail(const recipe::Config& config, const std::string& name) {
  if (const recipe::Recipe* recipe = config.find_recipe(name)) return *recipe;
  std::vector<std::string> names;
  for (const auto& r : config.recipes) names.push_back(r.name);
  util::fail_input(util::SourceLocation{.file = config.file.string()}, "unknown recipe '" + name + "'",
                   util::did_you_mean(name, names));
}

}  // namespace orc::site
