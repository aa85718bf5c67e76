#pragma once
// One recipe x tier of `dir`/orchestrate.yaml built on the host engine into
// `dir`/store, two jobs, plain progress: what the host-engine suites run.
#include <filesystem>
#include <ostream>
#include <string>

#include "orchestrator/app/build/build.hpp"

namespace orc::integration {

inline app::BuildReport build_on_host(const std::filesystem::path& dir, const std::string& tier,
                                      const std::string& recipe, std::ostream& progress) {
  return app::build({.config = dir / "orchestrate.yaml",
                     .tiers = {tier},
                     .recipes = {recipe},
                     .engine = engine::EngineKind::host,
                     .jobs = 2,
                     .explain = false,
                     .store_root = dir / "store",
                     .terminal = false},
                    progress);
}

}  // namespace orc::integration
