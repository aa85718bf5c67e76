#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "orchestrator/recipe/config.hpp"

namespace orc::site {

// Which orchestrate.yaml a command reads: -f when given, else
// $ORCHESTRATE_CONFIG, else ./orchestrate.yaml, else the example in
// ./recipes/ (so commands work from the repository root).
std::filesystem::path locate_config(const std::string& given);

// The configuration in `file`; nullopt when `required` is false and the file
// is absent. An invalid one throws util::Failure (bad input) with its
// diagnostics (file, line, what to do), and so does a tier whose `driver:` is
// past the last branch that runs one of its GPUs (compat::last_driver_branch).
std::optional<recipe::Config> load_config_file(const std::filesystem::path& file, bool required);

// The tier or recipe of that name; an unknown name throws util::Failure (bad
// input) naming the configuration file, with a did-you-mean.
const recipe::Tier& tier_or_fail(const recipe::Config& config, const std::string& name);
const recipe::Recipe& recipe_or_fail(const recipe::Config& config, const std::string& name);

}  // namespace orc::site
