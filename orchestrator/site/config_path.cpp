#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/env.hpp"

#include <cstdlib>

namespace orc::site {

std::filesystem::path locate_config(const std::string& given) {
  if (!given.empty()) return given;
  if (auto env = util::env_get("ORCHESTRATE_CONFIG")) return *env;
  if (std::filesystem::exists("orchestrate.yaml")) return "orchestrate.yaml";
  return "recipes/orchestrate.yaml";
}

}  // namespace orc::site
