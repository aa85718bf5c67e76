// `orchestrate build`: the configuration read once, planned once (and once
// more with the host's toolkits for the host engine), each plan entry keyed
// and looked up, and only the misses run.
#include "orchestrator/app/build/build.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <thread>

#include "orchestrator/app/build/build_job.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/site/host_toolkits.hpp"
#include "orchestrator/site/machine_key.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/site/store_root.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;
using detail::BuildJob;
using util::ExitCode;

// What to do about an engine socket that does not answer, by what went wrong.
std::string engine_unreachable_message(const engine::Discovery& discovery, const engine::Error& error) {
  std::string message = "cannot reach the " + std::string(engine::to_string(discovery.kind)) + " engine at " +
                        discovery.socket.string() + ": " + error.message;
  switch (error.kind) {
    case engine::ErrorKind::permission_denied:
      message +=
          " (this user may not use that socket: run as a member of its group, e.g. `docker`, or as root; "
          "or choose another engine with --engine)";
      break;
    case engine::ErrorKind::socket_missing:
    case engine::ErrorKind::connection_refused:
      message +=
          " (is the daemon running? start it, point DOCKER_HOST / CONTAINER_HOST at its socket, or "
          "build with --engine host)";
      break;
    default:
      break;
  }
  return message;
}

PlanScope scope_of(const BuildRequest& request) {
  PlanScope scope{.tiers = request.tiers, .recipes = request.recipes, .toolkits = std::nullopt};
  scope.table = request.toolkits;
  if (request.image) scope.toolkits = std::vector<util::Version>{request.image->toolkit.truncated(2)};
  return scope;
}

// The watcher's image in place of the plan's, on every entry it can serve.
void use_override(PlanReport& planned, const ImageOverride& image) {
  for (auto& entry : planned.plans) {
    if (!entry.ok) continue;
    entry.image = compat::ImageChoice{.reference = image.reference,
                                      .source = compat::ImageSource::official,
                                      .toolkit = image.toolkit,
                                      .cudnn = std::nullopt,
                                      .mounts = {},
                                      .nvcc = image.cuda_home + "/bin/nvcc",
                                      .host_compiler = {},
                                      .notes = {}};
    entry.image_needs_registry = false;
  }
}

// Every recipe x tier the request names, with every configured toolkit
// (or the watcher's image's).
PlanReport full_plan(const BuildRequest& request) {
  PlanReport full = plan(load_plan_config(request.config), scope_of(request));
  if (full.plans.empty())
    throw util::Failure(ExitCode::bad_input, "no recipe is built for tier " + util::join(request.tiers, ", "));
  if (request.image) use_override(full, *request.image);
  return full;
}

// The plan build runs: the full one, or for the host engine the one the
// installed toolkits allow (said before anything is built).
PlanReport plan_for_engine(PlanReport full, const BuildRequest& request, const engine::Discovery& discovery,
                           detail::Console& console) {
  for (const auto& w : full.config_warnings) console.line(std::string(util::trim(w.render())));
  if (discovery.kind != engine::EngineKind::host) return full;
  console.line("orchestrate: building on the HOST: " + discovery.reason);
  const auto host_toolkits = site::discover_host_toolkits(site::host_toolkit_search_from_environment());
  console.line("orchestrate: toolkits on this host: " + site::describe_host_toolkits(host_toolkits));
  return plan_on_host(full, scope_of(request), host_toolkits);
}

// Each plan warning once, with the plans it concerns.
void say_plan_warnings(const PlanReport& planned, detail::Console& console) {
  for (const auto& w : planned.grouped_warnings())
    console.line("orchestrate: warning: " + w.text + " (" + util::join(w.plans, ", ") + ")");
}

// A container engine that cannot be reached is said as itself (exit 3,
// with the socket and why), not as the image check it would otherwise
// fail. Asked only when some job needs the engine: hits need none.
void check_engine(std::vector<BuildJob>& jobs, const engine::Discovery& discovery) {
  if (discovery.kind == engine::EngineKind::host) return;
  const bool needed = std::ranges::any_of(jobs, [](const BuildJob& j) {
    return j.image_problem || (j.result.exit_code == ExitCode::ok && j.result.status != BuildStatus::cached);
  });
  if (!needed) return;
  auto probe = engine::DockerEngine::connect(discovery.socket);
  if (probe) return;
  const std::string problem = engine_unreachable_message(discovery, probe.error());
  for (auto& job : jobs) {
    if (job.image_problem) job.result.errors.clear();
    if (!job.image_problem && (job.result.exit_code != ExitCode::ok || job.result.status == BuildStatus::cached))
      continue;
    job.result.exit_code = ExitCode::outside_failure;
    job.result.status = BuildStatus::failed;
    job.result.errors.push_back(problem);
  }
}

// "FAILED (exit 1) after 3.2 s; log: ...", or "built in 3.2 s".
std::string outcome_line(const BuildResult& result, double seconds) {
  char took[32];
  std::snprintf(took, sizeof took, "%.1f s", seconds);
  if (result.status == BuildStatus::built) return std::string("built in ") + took;
  return "FAILED (exit " + std::to_string(static_cast<int>(result.exit_code)) + ") after " + took +
         "; log: " + result.log_file;
}

// The misses, up to --jobs at a time.
void run_misses(std::vector<BuildJob*>& misses, detail::RunContext& context, unsigned requested_jobs) {
  const unsigned parallel =
      std::max(1u, std::min<unsigned>(requested_jobs ? requested_jobs : 1, static_cast<unsigned>(misses.size())));
  std::atomic<std::size_t> next{0};
  std::vector<std::jthread> workers;
  for (unsigned w = 0; w < parallel; ++w)
    workers.emplace_back([&] {
      for (std::size_t i = next++; i < misses.size(); i = next++) {
        BuildJob& job = *misses[i];
        const std::string name = plan_name(job.plan);
        context.console->started(name);
        const auto start = std::chrono::steady_clock::now();
        detail::run_job(job, context);
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        context.console->finished(name, outcome_line(job.result, took));
      }
    });
}

cache::Store open_store(const fs::path& requested) {
  const fs::path root = site::store_root(requested);
  auto opened = cache::Store::open(root);
  if (!opened)
    site::fail_with(
        {opened.error().kind, "cannot open the local store at " + root.string() + ": " + opened.error().message});
  return std::move(*opened);
}

}  // namespace

ExitCode BuildReport::exit_code() const {
  ExitCode code = ExitCode::ok;
  for (const auto& b : builds) code = std::max(code, b.exit_code);
  return code;
}

BuildReport build(const BuildRequest& request, std::ostream& progress) {
  PlanReport full = full_plan(request);
  auto discovery = engine::discover_engine(request.engine);
  // A DOCKER_HOST that is not a unix socket is the user's input; no daemon
  // where one was asked for is the world's failure.
  if (!discovery)
    throw util::Failure(
        discovery.error().kind == engine::ErrorKind::config ? ExitCode::bad_input : ExitCode::outside_failure,
        discovery.error().message);
  if (request.image && discovery->kind == engine::EngineKind::host)
    throw util::Failure(ExitCode::bad_input,
                        "building in the image " + request.image->reference +
                            " needs a container engine, and this build would run on the host: " + discovery->reason);
  detail::Console console(progress, request.terminal);
  const PlanReport planned = plan_for_engine(std::move(full), request, *discovery, console);
  say_plan_warnings(planned, console);

  cache::Store store = open_store(request.store_root);
  const detail::PrepareContext prepare{.kind = discovery->kind,
                                       .store = &store,
                                       .jobs_per_build = detail::jobs_per_build(request.jobs, planned.plans.size()),
                                       .explain = request.explain,
                                       .image_override = request.image ? &*request.image : nullptr,
                                       .source_dirs = &request.source_dirs};
  std::vector<BuildJob> jobs;
  for (const auto& entry : planned.plans) jobs.push_back(detail::prepare_job(entry, prepare));
  check_engine(jobs, *discovery);
  for (auto& job : jobs)
    if (job.result.status == BuildStatus::cached) detail::attach_needs(job.result, store);

  std::vector<BuildJob*> misses;
  for (auto& job : jobs)
    if (job.result.exit_code == ExitCode::ok && job.result.status != BuildStatus::cached) misses.push_back(&job);
  if (!misses.empty()) {
    engine::CancelFlag own_cancel;
    std::optional<engine::ScopedSignalCancel> on_signal;
    if (!request.cancel) on_signal.emplace(own_cancel);
    engine::CancelFlag& cancel = request.cancel ? *request.cancel : own_cancel;
    const std::optional<cache::SigningKey> key =
        site::machine_signing_key([&console](const std::string& line) { console.line(line); });
    detail::RunContext context{.discovery = *discovery,
                               .store = &store,
                               .signing_key = key ? &*key : nullptr,
                               .console = &console,
                               .cancel = &cancel,
                               .jobs_per_build = 1,
                               .keep_failed = request.keep_failed,
                               .trigger = request.trigger ? &*request.trigger : nullptr};
    run_misses(misses, context, request.jobs);
  }
  for (auto& job : jobs) detail::make_image(job, *discovery);
  console.done();
  BuildReport report;
  for (auto& job : jobs) report.builds.push_back(std::move(job.result));
  for (const auto& w : planned.config_warnings) report.warnings.push_back({.text = w.headline(), .builds = {}});
  for (auto& w : planned.grouped_warnings()) report.warnings.push_back({.text = w.text, .builds = std::move(w.plans)});
  return report;
}

}  // namespace orc::app
