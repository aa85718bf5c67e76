#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "orchestrator/app/cluster/slurm.hpp"
#include "orchestrator/app/smoke/smoke.hpp"
#include "orchestrator/app/smoke/smoke_attest.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Builds kernels/ for the tier (as `orchestrate build TIER` would, so a second run
is a cache hit), then on every GPU of this machine loads the fatbin and says
"native" (a cubin loaded), "jit" (PTX compiled at load; the time is measured
with the JIT cache disabled) or "none" (error 209, "no kernel image"), and runs
every kernel against a CPU reference with fresh random inputs. A kernel whose
feature the loaded code lacks (wmma < 7.0, bf16 < 8.0, fp8 < 8.9, clusters
< 9.0) is "skipped", not failed. --artifact also loads every fatbin the files
embed (.so, .a, cubin, fatbin, wheels, tarballs) on each GPU. --recipe R loads
R's current set for the tier (the set `build` last answered, or `promote` named;
said when a newer set by time is not current) and attests the outcome in it.

Exit codes: 0 passed; 1 a GPU got "none", a load error or a wrong result;
2 bad usage or configuration; 3 no NVIDIA driver or GPU here (nothing can be
proven), or the build engine failed.)";

}  // namespace

void attach_smoke(CLI::App& sub, Io& io) {
  struct Options {
    std::string tier;
    std::vector<std::string> artifacts;
    std::string fatbin;
    std::string engine;
    std::string file;
    std::vector<std::string> recipes;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  sub.add_option("tier", opt->tier, "Tier whose plan builds the kernels");
  sub.add_option("--artifact", opt->artifacts,
                 "Also load every fatbin this file, or this stored artifact set (sha256:PREFIX), embeds; a set gets "
                 "the outcome attested in its signed manifest (repeatable)");
  auto* fatbin = sub.add_option("--fatbin", opt->fatbin, "Run this already built kernels fatbin instead of building");
  sub.add_option("--engine", opt->engine,
                 "docker, podman or host, or slurm: smoke-test each recipe's current set on a node of the "
                 "tier (default: the first engine socket found, else host)")
      ->check(CLI::IsMember({"docker", "podman", "host", "slurm"}));
  sub.add_option("-r,--recipe", opt->recipes,
                 "Also load and attest this recipe's current set for the tier (with --engine slurm: only this "
                 "recipe's set) (repeatable)");
  sub.add_option("-f,--file", opt->file,
                 "Configuration file (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  sub.add_flag("--json", opt->json, "Print the result as JSON on stdout, nothing else");
  sub.footer(k_footer);

  sub.callback([opt, fatbin, &io] {
    if (opt->tier.empty() && fatbin->count() == 0) util::fail_input("smoke needs a TIER, or --fatbin FILE");
    if (opt->engine == "slurm") {
      if (opt->tier.empty()) util::fail_input("smoke --engine slurm needs a TIER");
      const app::SlurmReport report = app::slurm_dispatch(app::SlurmRequest{.work = app::SlurmWork::smoke,
                                                                            .config = site::locate_config(opt->file),
                                                                            .tiers = {opt->tier},
                                                                            .recipes = opt->recipes,
                                                                            .progress = &io.err});
      io.out << (opt->json ? render_slurm_json(report) : render_slurm_text(report));
      io.exit_code = report.exit_code();
      return;
    }
    app::SmokeRequest request;
    request.tier = opt->tier;
    request.recipes = opt->recipes;
    if (!opt->tier.empty()) request.config = site::locate_config(opt->file);
    if (!opt->fatbin.empty()) request.fatbin = opt->fatbin;
    for (const auto& a : opt->artifacts) {
      if (app::names_artifact_set(a))
        request.artifact_sets.push_back(a);
      else
        request.artifacts.emplace_back(a);
    }
    if (!opt->engine.empty()) request.engine = engine::parse_engine_kind(opt->engine);
    const app::SmokeOutput output = app::run_smoke(request, io.err);
    emit(io, output, opt->json ? Format::json : Format::text);
  });
}

}  // namespace orc::cli
