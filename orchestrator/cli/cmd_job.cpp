#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "orchestrator/app/cluster/slurm.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/site/config_path.hpp"

namespace orc::cli {

// `orchestrate job build|smoke`: what a job `build --engine slurm` or `smoke
// --engine slurm` submitted runs on its node. Not for users: the job script
// names it.
void attach_job(CLI::App& sub, Io& io) {
  sub.require_subcommand(1);
  struct Options {
    std::string recipe;
    std::string tier;
    std::string file;
    std::string engine;
    std::string set;
    std::string source;
  };
  for (const auto work : {app::SlurmWork::build, app::SlurmWork::smoke}) {
    auto opt = std::make_shared<Options>();
    CLI::App* cmd = sub.add_subcommand(
        work == app::SlurmWork::build ? "build" : "smoke",
        work == app::SlurmWork::build
            ? "Build one recipe x tier in this job's own store, push it, name it in the job's comment"
            : "Pull a set, smoke-test it on this node, push the attested set, name it in the job's comment");
    cmd->add_option("--recipe", opt->recipe, "The recipe")->required();
    cmd->add_option("--tier", opt->tier, "The tier")->required();
    cmd->add_option("-f,--file", opt->file, "Configuration file")->required();
    if (work == app::SlurmWork::build) {
      cmd->add_option("--engine", opt->engine, "docker, podman or host (default: discovered on this node)")
          ->check(CLI::IsMember({"docker", "podman", "host"}));
      cmd->add_option(
          "--source", opt->source,
          "A signed source snapshot (sha256:..., k8s render --push) to build in place of the recipe's path");
    } else {
      cmd->add_option("--set", opt->set, "The set to smoke-test (sha256:...)")->required();
    }
    cmd->callback([opt, work, &io] {
      io.exit_code = app::run_job(app::JobRunRequest{.work = work,
                                                     .config = site::locate_config(opt->file),
                                                     .recipe = opt->recipe,
                                                     .tier = opt->tier,
                                                     .set = opt->set,
                                                     .node_engine = opt->engine,
                                                     .source = opt->source,
                                                     .out = &io.out});
    });
  }
}

}  // namespace orc::cli
