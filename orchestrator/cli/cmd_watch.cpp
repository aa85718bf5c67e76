#include <unistd.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "orchestrator/app/watch/watch.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/duration.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(The feeds are the configuration's `watch:` (recipes/schema.md): registry
repositories of nvidia/cuda-scheme tags (each kept tag's manifest digest is
read, so a base rebuilt under its tag counts), NVIDIA redistributable
indexes and the Debian archive of the offline images. With no feed named
there, the watcher follows what this site's images are made from, and says
so: the Debian suite of each offline image `images build` recorded, and,
with ORCHESTRATE_IMAGE_PREFERENCE=official, the official nvidia/cuda devel
tags of the configuration's toolkits. Each recipe x tier's newest verified artifact set in the local
store ($ORCHESTRATE_CACHE_DIR, else $XDG_CACHE_HOME/orchestrate) is compared
with what they offer, under the recipe's `watch:` policy (patch, minor,
major, pinned). A newer toolkit that drops a GPU of the tier is declined
with the last toolkit that serves it.

Without --dry-run each stale pair is rebuilt in the image offered (pulled
through the docker or podman engine), verified and stored with a manifest
that records why (trigger, old and new toolkit, image and digest),
smoke-tested when a GPU of the tier is on this machine, and pushed when a
remote is configured. A pair is rebuilt under a lock in the store: a second
watcher skips it and says so. SIGTERM or SIGINT stops the feed request,
pull or build under way within a second (a push, an image being made again
or a smoke test finishes first; nothing half-built is stored, the next cycle
builds it again), says so, and exits 128 + the signal (143 for SIGTERM, 130
for SIGINT). --deadline D bounds one cycle, feeds and rebuilds together
(default 6h): past it the cycle stops the same way and says so (exit 3).

A feed that lists nothing the watcher recognises (a page that links no
redistrib_X.Y.Z.json, an index page linking more than 512, a registry with
no tag the entry keeps, a Debian index with none of an image's packages)
is a failed feed that says what was expected.

--interval D runs cycles until stopped (D as 30s, 15m, 6h, 1d), one status
line per cycle on stderr; after a cycle in which a feed failed the next
comes sooner (1 min, doubling). `orchestrate schedule` prints systemd units
or a crontab line that run `watch --once` instead.

Exit codes (--once): 0 the cycle ran (stale pairs or not); 1 a rebuild
failed its build, verification or smoke test; 2 bad usage, or nothing to
follow (no feed under watch:, no image recorded, offline preference); 3
every feed failed, the cycle passed its deadline, or the engine, store or
registry failed; 130 or 143 stopped by SIGINT or SIGTERM.)";

constexpr const char* k_duration_expected = "expected a positive duration like 30s, 15m, 6h or 1d (a year at most)";

}  // namespace

void attach_watch(CLI::App& sub, Io& io) {
  struct Options {
    std::string file;
    bool once = false;
    bool dry_run = false;
    bool json = false;
    std::string interval;
    std::string deadline = "6h";
    std::string engine;
    bool remote = false;
  };
  auto opt = std::make_shared<Options>();
  sub.footer(k_footer);
  sub.add_flag("--once", opt->once, "One cycle: poll every feed, judge and rebuild every stale recipe x tier, exit");
  sub.add_option("--interval", opt->interval, "Run as a service: a cycle every D (30s, 15m, 6h, 1d) until SIGTERM");
  sub.add_option("--deadline", opt->deadline,
                 "The most one cycle may take, feeds and rebuilds together (30s, 15m, 6h, 1d; default 6h)");
  sub.add_flag("--dry-run", opt->dry_run, "Report what is stale and why; build nothing");
  sub.add_flag("--json", opt->json, "With --once: print the cycle as JSON on stdout, nothing else");
  sub.add_flag("--remote", opt->remote,
               "With keep: in watch:, also delete older sets of each recipe x tier from the remote (OCI DELETE)");
  sub.add_option("--engine", opt->engine, "docker or podman (default: the first engine socket found)")
      ->check(CLI::IsMember({"docker", "podman"}));
  sub.add_option("-f,--file", opt->file,
                 "Configuration (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  sub.callback([opt, &io] {
    if (opt->once == !opt->interval.empty())
      throw util::Failure(util::ExitCode::bad_input,
                          "orchestrate watch needs exactly one of --once (one cycle) and --interval D (a service)");
    if (opt->json && !opt->once)
      throw util::Failure(util::ExitCode::bad_input, "--json goes with --once; the service prints status lines");
    const auto deadline = parse_duration(opt->deadline);
    if (!deadline)
      throw util::Failure(util::ExitCode::bad_input, "--deadline '" + opt->deadline + "': " + k_duration_expected);
    app::WatchRequest request{.config = site::locate_config(opt->file),
                              .store_root = {},
                              .dry_run = opt->dry_run,
                              .engine = std::nullopt,
                              .progress = &io.err,
                              .terminal = ::isatty(STDERR_FILENO) == 1,
                              .cancel = nullptr,
                              .prune_remote = opt->remote,
                              .deadline = *deadline};
    if (!opt->engine.empty()) request.engine = engine::parse_engine_kind(opt->engine);
    engine::CancelFlag cancel;
    const engine::ScopedSignalCancel on_signal(cancel);
    request.cancel = &cancel;
    if (opt->once) {
      emit(io, app::watch_once(request), opt->json ? Format::json : Format::text);
      return;
    }
    const auto interval = parse_duration(opt->interval);
    if (!interval)
      throw util::Failure(util::ExitCode::bad_input, "--interval '" + opt->interval + "': " + k_duration_expected);
    io.exit_code = app::watch_service(request, {.interval = *interval, .max_cycles = 0}, io.err);
  });
}

}  // namespace orc::cli
