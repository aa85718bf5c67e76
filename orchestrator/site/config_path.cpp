#include "orchestrator/site/config_path.hpp"

#include <cstdlib>
#include <system_error>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"

namespace orc::site {

std::filesystem::path locate_config(const std::string& given) {
  if (!given.empty()) return given;
  if (auto env = util::env_get("ORCHESTRATE_CONFIG")) return *env;
  if (std::filesystem::exists("orchestrate.yaml")) return "orchestrate.yaml";
  return "recipes/orchestrate.yaml";
}

std::optional<recipe::Config> load_config_file(const std::filesystem::path& file, bool required) {
  std::error_code ec;
  if (!required && !std::filesystem::exists(file, ec)) return std::nullopt;
  auto config = recipe::load_config(file);
  if (!config) throw util::Failure(util::ExitCode::bad_input, std::move(config.error()));
  return std::move(*config);
}

}  // namespace orc::site
