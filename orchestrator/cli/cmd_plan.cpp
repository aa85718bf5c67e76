#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>

#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/config_path.hpp"

namespace orc::cli {

void attach_plan(CLI::App& sub, Io& io) {
  struct Options {
    std::vector<std::string> tiers;
    std::vector<std::string> recipes;
    std::string file;
    bool json = false;
    bool explain = false;
  };
  auto opt = std::make_shared<Options>();
  sub.add_option("tiers", opt->tiers, "Tiers to plan (default: every tier)");
  sub.add_option("-f,--file", opt->file,
                 "Configuration file (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  sub.add_option("-r,--recipe", opt->recipes, "Only these recipes");
  sub.add_flag("-e,--explain", opt->explain, "Also print why each toolkit was chosen and why newer ones were not");
  sub.add_flag("--json", opt->json, "Print {\"plans\": [...]} as JSON on stdout, nothing else");
  sub.callback([opt, &io] {
    const app::PlanReport report = app::plan(
        app::PlanRequest{.config = site::locate_config(opt->file), .tiers = opt->tiers, .recipes = opt->recipes});
    emit(io, report, opt->json ? Format::json : Format::text, opt->explain);
  });
}

}  // namespace orc::cli
