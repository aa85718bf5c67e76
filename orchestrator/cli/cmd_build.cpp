#include <unistd.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/cluster/slurm.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(A build whose key (recipe, source revision or tree, image, archs, env, steps,
tool version) is in the local store is "cached" and not run again; --explain
prints every input of the key, one per line, so two runs can be diffed.
The store is $ORCHESTRATE_CACHE_DIR, else $XDG_CACHE_HOME/orchestrate.

Exit codes: 0 built or cached; 1 a build or its verification failed (nothing
is stored for it); 2 bad usage or configuration; 3 the engine failed.)";

}  // namespace

void attach_build(CLI::App& sub, Io& io) {
  struct Options {
    std::vector<std::string> tiers;
    std::vector<std::string> recipes;
    std::string engine;
    unsigned jobs = 0;
    bool explain = false;
    bool json = false;
    bool keep_failed = false;
    std::string file;
    std::string node_engine;
  };
  auto opt = std::make_shared<Options>();
  sub.add_option("tiers", opt->tiers, "Tiers to build for")->required();
  sub.add_option("-r,--recipe", opt->recipes, "Build only this recipe (repeatable)");
  sub.add_option("--engine", opt->engine,
                 "docker, podman, host, or slurm: one job per recipe x tier on the tier's nodes (default: the first "
                 "engine socket found, else host)")
      ->check(CLI::IsMember({"docker", "podman", "host", "slurm"}));
  sub.add_option("--node-engine", opt->node_engine, "With --engine slurm: the engine each job builds with on its node")
      ->check(CLI::IsMember({"docker", "podman", "host"}));
  sub.add_option("--jobs", opt->jobs, "Builds at once, and the parallelism they share (default: one per core)");
  sub.add_flag("--explain", opt->explain, "Print every input of each build's cache key");
  sub.add_flag("--json", opt->json, "Print {\"builds\": [...]} as JSON on stdout, nothing else");
  sub.add_flag("--keep-failed", opt->keep_failed, "Keep a failed build's tree (its path is in the error)");
  sub.add_option("-f,--file", opt->file,
                 "Configuration file (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  sub.footer(k_footer);

  sub.callback([opt, &io] {
    if (opt->engine == "slurm") {
      const app::SlurmReport report = app::slurm_dispatch(app::SlurmRequest{.work = app::SlurmWork::build,
                                                                           .config = site::locate_config(opt->file),
                                                                           .tiers = opt->tiers,
                                                                           .recipes = opt->recipes,
                                                                           .node_engine = opt->node_engine,
                                                                           .progress = &io.err});
      io.out << (opt->json ? render_slurm_json(report) : render_slurm_text(report));
      io.exit_code = report.exit_code();
      return;
    }
    app::BuildRequest request;
    request.config = site::locate_config(opt->file);
    request.tiers = opt->tiers;
    request.recipes = opt->recipes;
    if (!opt->engine.empty()) request.engine = engine::parse_engine_kind(opt->engine);
    request.jobs = opt->jobs;
    request.explain = opt->explain;
    request.terminal = ::isatty(STDERR_FILENO) == 1;
    request.keep_failed = opt->keep_failed;
    const app::BuildReport report = app::build(request, io.err);
    io.out << (opt->json ? render_build_json(report) : render_build_text(report, opt->explain));
    io.err << render_build_errors(report);
    io.exit_code = report.exit_code();
  });
}

}  // namespace orc::cli
