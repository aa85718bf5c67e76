#include "orchestrator/app/config_path.hpp"

#include <cstdlib>

namespace orc::app {

std::filesystem::path locate_config(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("ORCHESTRATE_CONFIG"); env && *env) return env;
  if (std::filesystem::exists("orchestrate.yaml")) return "orchestrate.yaml";
  return "recipes/orchestrate.yaml";
}

}  // namespace orc::app
