#include "orchestrator/app/build.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>

#include "orchestrator/app/build_job.hpp"
#include "orchestrator/app/build_key.hpp"
#include "orchestrator/app/cache_cmd.hpp"
#include "orchestrator/app/host_toolkits.hpp"
#include "orchestrator/app/images.hpp"
#include "orchestrator/app/machine_key.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/engine/host_engine.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;
using detail::BuildImage;
using detail::BuildJob;
using detail::workspace_dir;
using util::ExitCode;

constexpr std::string_view k_tool_version = "0.1.0";
// Variables kept out of the cache key: the parallelism ones change how fast
// a build runs, not what it makes (--jobs must not rebuild); PATH is the
// toolkit's bin (keyed as CUDA_HOME) in front of the caller's own PATH,
// which differs between shells.
constexpr std::array<std::string_view, 3> k_unkeyed_env = {"MAX_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL", "PATH"};

class NullSink final : public engine::LogSink {
 public:
  void on_output(engine::OutputStream, std::string_view) override {}
};

// The image for a plan on this engine, or why there is none.
std::expected<BuildImage, std::string> choose_build_image(const PlanEntry& plan, engine::EngineKind kind,
                                                          const std::vector<HostToolkit>& host_toolkits,
                                                          const std::optional<compat::HostCuda>& host) {
  const util::Version wanted = *util::Version::parse(*plan.toolkit);
  if (kind == engine::EngineKind::host) {
    // The host plan chose among the host's toolkits, so one is there.
    const auto toolkit = find_host_toolkit(host_toolkits, wanted);
    if (!toolkit) return std::unexpected("no toolkit on this host serves CUDA " + *plan.toolkit);
    return BuildImage{.reference = "host",
                      .digest = "cuda " + toolkit->version.str() + " at " + toolkit->root.string(),
                      .cuda_home = toolkit->root.string(),
                      .host_compiler = {},
                      .mounts = {}};
  }
  const compat::Toolkit* toolkit = compat::find_toolkit(wanted);
  const compat::CudnnRelease* cudnn = plan.cudnn ? compat::find_cudnn(*util::Version::parse(*plan.cudnn)) : nullptr;
  if (!toolkit) return std::unexpected("no toolkit row for CUDA " + *plan.toolkit);
  auto choice = compat::choose_image(*toolkit, cudnn, compat::ImagePreference::offline_first, host);
  if (!choice) return std::unexpected("no build image serves CUDA " + *plan.toolkit);
  BuildImage image{.reference = choice->reference,
                   .digest = {},
                   .cuda_home = std::string(compat::k_default_host_cuda),
                   .host_compiler = choice->host_compiler,
                   .mounts = {}};
  // Debian's packaged toolkit lives in /usr (nvcc is /usr/bin/nvcc).
  if (choice->nvcc.starts_with("/usr/bin/")) image.cuda_home = "/usr";
  for (const auto& m : choice->mounts)
    image.mounts.push_back({.host = m.host,
                            .container = m.container,
                            .access = m.read_only ? engine::Access::read_only : engine::Access::read_write});
  // An image this project builds itself is keyed by the ID the engine gave
  // it (recorded by `orchestrate images build`), not by its tag: rebuilding
  // the image must rebuild what was made in it. One never built here is
  // bad local state, said before anything runs.
  if (choice->source != compat::ImageSource::official) {
    const compat::OfflineImage* offline = compat::find_offline_image(choice->reference);
    const std::string name = offline ? std::string(offline->name) : choice->reference;
    auto record = find_built_image(choice->reference);
    if (!record || record->id.empty())
      return std::unexpected("the build image " + choice->reference + " was never built here (no record in " +
                             image_state_path().string() + "): run `orchestrate images build " + name + "` first");
    image.digest = record->id;
  }
  // The host toolkit a host-mount image borrows is part of what it builds with.
  if (choice->source == compat::ImageSource::host_mount && host)
    image.digest += (image.digest.empty() ? "" : " + ") + std::string("host cuda ") + host->toolkit.str();
  return image;
}

// The host engine can build only with what is installed here: the plan is
// made again with the host's toolkits that the configuration allows. A
// recipe x tier they cannot serve fails with the reasons, and with what the
// full plan would have used, so the user knows what to install.
PlanReport plan_on_host(PlanRequest request, const recipe::Config& config,
                        const std::vector<HostToolkit>& host_toolkits, const PlanReport& full_plan) {
  std::vector<util::Version> usable;
  for (const auto& t : host_toolkits) {
    const util::Version v = t.version.truncated(2);
    const bool allowed = config.toolkits.empty() || std::ranges::any_of(config.toolkits, [&](const util::Version& c) {
                           return c.truncated(2) == v;
                         });
    if (allowed && std::ranges::find(usable, v) == usable.end()) usable.push_back(v);
  }
  std::vector<std::string> allowed;
  for (const auto& v : config.toolkits) allowed.push_back(v.str());
  PlanReport host_plan = full_plan;
  if (!usable.empty()) {
    request.toolkits = usable;
    host_plan = plan(request);
  }
  for (std::size_t i = 0; i < host_plan.plans.size(); ++i) {
    PlanEntry& e = host_plan.plans[i];
    if (!usable.empty() && e.ok) continue;
    const PlanEntry& full = full_plan.plans[i];
    std::string why;
    if (host_toolkits.empty())
      why =
          "the host engine found no CUDA toolkit (no nvcc in ORCHESTRATE_HOST_TOOLKITS, on PATH, in "
          "ORCHESTRATE_HOST_CUDA, /usr/local/cuda or /usr/local/cuda-*)";
    else if (usable.empty())
      why = "none of the toolkits on this host (" + describe_host_toolkits(host_toolkits) +
            ") is in the configuration's toolkits: (" + util::join(allowed, ", ") + ")";
    else
      why = "the toolkits on this host (" + describe_host_toolkits(host_toolkits) +
            ") cannot serve it: " + util::join(e.reasons, "; ");
    if (full.ok)
      why += "; with every configured toolkit it would use CUDA " + *full.toolkit + ": install that toolkit here (" +
             "ORCHESTRATE_HOST_TOOLKITS names extra ones) or build in a container engine";
    e.ok = false;
    e.reasons = {why};
    e.host_unservable = true;
  }
  return host_plan;
}

// An image whose toolkit takes an older GCC than its default (11.8 on
// bookworm: g++-11; 12.4 on trixie: g++-13) carries only that compiler, so
// the build is told which one: CC and CXX for CMake's own languages and
// plain makefiles, CUDAHOSTCXX for CMake's CUDA host compiler. What the
// recipe's environment sets wins.
void add_host_compiler_env(DriverPlan& driver, const std::string& host_compiler) {
  if (host_compiler.empty()) return;
  std::string cc = host_compiler;
  if (const auto at = cc.find("g++"); at != std::string::npos)
    cc.replace(at, 3, "gcc");
  else if (const auto clang = cc.find("clang++"); clang != std::string::npos)
    cc.replace(clang, 7, "clang");
  for (const auto& [name, value] :
       {std::pair<std::string, std::string>{"CC", cc}, {"CXX", host_compiler}, {"CUDAHOSTCXX", host_compiler}}) {
    const bool set = std::ranges::any_of(driver.env, [&](const auto& e) { return e.first == name; });
    if (!set) driver.env.emplace_back(name, value);
  }
}

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

KeyInputs key_inputs(const BuildJob& job, const recipe::Tier& tier, engine::EngineKind kind) {
  KeyInputs in{.tool_version = std::string(k_tool_version),
               .recipe_text = canonical_recipe(*job.recipe),
               .tier = tier.name,
               .gpus = {},
               .ptx_policy = job.plan.ptx_policy,
               .source_kind = job.source.kind,
               .source_revision = job.source.revision,
               .engine = std::string(engine::to_string(kind)),
               .image = job.image.reference,
               .image_digest = job.image.digest,
               .toolkit = job.plan.toolkit.value_or(""),
               .cudnn = job.plan.cudnn.value_or(""),
               .sass = job.plan.sass,
               .ptx = job.plan.ptx,
               .env = {},
               .steps = {}};
  for (const auto& g : job.plan.gpus) in.gpus.push_back(g.name + "=" + g.cc);
  for (const auto& [name, value] : job.driver.env)
    if (std::ranges::find(k_unkeyed_env, name) == k_unkeyed_env.end()) in.env.push_back(name + "=" + value);
  std::ranges::sort(in.env);
  for (const auto& step : job.driver.steps) {
    // The -j of a default step is parallelism too.
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < step.size(); ++i) {
      if (step[i] == "-j" && i + 1 < step.size())
        ++i;
      else if (!step[i].starts_with("--jobs=") && !(step[i].starts_with("-j") && step[i].size() > 2))
        shown.push_back(step[i]);
    }
    in.steps.push_back(util::join(shown, " "));
  }
  return in;
}

// Fills job.result for a hit: the newest verified artifact set the index
// has for this key, its manifest re-read and re-hashed and every file blob
// present. False when there is none or it does not hold up, which is then a
// miss (a rebuild replaces it).
bool load_hit(BuildJob& job, const cache::Store& store) {
  auto sets = store.index().list({.recipe = {}, .tier = {}, .key = job.key, .verified_only = true});
  if (!sets || sets->empty()) return false;
  // Our own store: the signature is checked when a set crosses machines
  // (fetch, pull), not on every local hit.
  auto loaded = cache::load_artifact_set(store, sets->front(), cache::TrustedKeys{});
  if (!loaded) return false;
  for (const auto& f : loaded->manifest.files)
    job.result.artifacts.push_back({.name = f.path,
                                    .path = store.blob_path(f.sha256).string(),
                                    .sha256 = f.sha256,
                                    .size = f.size,
                                    .sass = f.embedded_sass,
                                    .ptx = f.embedded_ptx});
  job.result.status = BuildStatus::cached;
  job.result.manifest = "sha256:" + sets->front().manifest;
  return true;
}

}  // namespace

int BuildReport::exit_code() const {
  int code = 0;
  for (const auto& b : builds) code = std::max(code, b.exit_code);
  return code;
}

BuildReport build(const BuildRequest& request, std::ostream& progress) {
  auto config = recipe::load_config(request.config);
  if (!config) throw util::Failure(ExitCode::bad_input, std::move(config.error()));
  PlanRequest plan_request{
      .config = request.config, .tiers = request.tiers, .recipes = request.recipes, .toolkits = {}};
  const PlanReport full_plan = plan(plan_request);
  if (full_plan.plans.empty())
    throw util::Failure(ExitCode::bad_input, "no recipe is built for tier " + util::join(request.tiers, ", "));

  auto discovery = engine::discover_engine(request.engine);
  // A DOCKER_HOST that is not a unix socket is the user's input; no daemon
  // where one was asked for is the world's failure.
  if (!discovery)
    throw util::Failure(discovery.error().kind == engine::ErrorKind::config ? ExitCode::bad_input
                                                                            : ExitCode::outside_failure,
                        discovery.error().message);
  detail::Console console(progress, request.terminal);
  std::vector<HostToolkit> host_toolkits;
  PlanReport planned = full_plan;
  if (discovery->kind == engine::EngineKind::host) {
    console.line("orchestrate: building on the HOST as local processes (not isolated): " + discovery->reason);
    host_toolkits = discover_host_toolkits(host_toolkit_search_from_environment());
    console.line("orchestrate: toolkits on this host: " + describe_host_toolkits(host_toolkits));
    planned = plan_on_host(plan_request, *config, host_toolkits, full_plan);
  }

  // A container engine that cannot be reached is said first and as itself
  // (exit 3, with the socket and why), not as the image check it would
  // otherwise fail. Hits are still served: they need no engine.
  std::optional<std::string> engine_problem;
  if (discovery->kind != engine::EngineKind::host)
    if (auto probe = engine::DockerEngine::connect(discovery->socket); !probe)
      engine_problem = engine_unreachable_message(*discovery, probe.error());

  const fs::path store_root = request.store_root.empty() ? cache::default_store_root() : request.store_root;
  auto opened = cache::Store::open(store_root);
  if (!opened)
    fail_with(
        {opened.error().kind, "cannot open the local store at " + store_root.string() + ": " + opened.error().message});
  cache::Store& store = *opened;
  const auto host = detect_host_cuda();
  NullSink quiet;
  engine::HostEngine git_runner;

  BuildReport report;
  std::vector<BuildJob> jobs;
  for (const auto& entry : planned.plans) {
    BuildJob job;
    job.recipe = config->find_recipe(entry.recipe);
    job.plan = entry;
    job.result.recipe = entry.recipe;
    job.result.tier = entry.tier;
    const auto fail = [&job](int code, std::string message) {
      job.result.exit_code = code;
      job.result.errors.push_back(std::move(message));
    };
    if (!entry.ok) {
      fail(2, (entry.host_unservable ? "" : "unsatisfiable: ") + util::join(entry.reasons, "; "));
    } else if (auto image = choose_build_image(entry, discovery->kind, host_toolkits, host); !image) {
      if (engine_problem)
        fail(3, *engine_problem);
      else
        fail(2, image.error());
    } else if (auto source = prepare_source(job.recipe->source, workspace_dir(store, entry.recipe), git_runner, quiet);
               !source) {
      // A path the recipe names is the user's input; a git remote is outside.
      fail(job.recipe->source.kind == recipe::Source::Kind::path ? 2 : 3, "source: " + source.error());
    } else {
      job.image = std::move(*image);
      job.source = std::move(*source);
      DriverInput input{.plan = &job.plan,
                        .recipe = job.recipe,
                        .place = discovery->kind == engine::EngineKind::host ? BuildPlace::host : BuildPlace::container,
                        .cuda_home = job.image.cuda_home,
                        .base_path = {},
                        .jobs = 1,
                        .generator = CmakeGenerator::makefiles,
                        .source_dir = job.source.dir,
                        .workspace = workspace_dir(store, entry.recipe)};
      if (input.place == BuildPlace::host)
        if (auto path = util::env_get("PATH")) input.base_path = *path;
      const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
      input.jobs = std::max(1u, (request.jobs ? request.jobs : cores) /
                                    static_cast<unsigned>(std::min<std::size_t>(planned.plans.size(), cores)));
      auto driver = plan_driver(input);
      if (!driver) {
        fail(2, driver.error());
      } else {
        job.driver = std::move(*driver);
        add_host_compiler_env(job.driver, job.image.host_compiler);
        const KeyHasher key = hash_key(key_inputs(job, *config->find_tier(entry.tier), discovery->kind));
        job.key = key.hex();
        job.result.key = job.key;
        if (request.explain) job.result.explain = key.explain();
        load_hit(job, store);
      }
    }
    if (job.result.exit_code != 0) job.result.status = BuildStatus::failed;
    jobs.push_back(std::move(job));
  }

  // The misses, up to --jobs at a time.
  std::vector<BuildJob*> misses;
  for (auto& job : jobs) {
    if (job.result.exit_code != 0 || job.result.status == BuildStatus::cached) continue;
    if (engine_problem) {
      job.result.exit_code = 3;
      job.result.status = BuildStatus::failed;
      job.result.errors.push_back(*engine_problem);
      continue;
    }
    misses.push_back(&job);
  }
  if (!misses.empty()) {
    engine::CancelFlag cancel;
    engine::ScopedSignalCancel on_signal(cancel);
    const std::optional<cache::SigningKey> key =
        machine_signing_key([&console](const std::string& line) { console.line(line); });
    detail::RunContext context{.discovery = *discovery,
                               .store = &store,
                               .signing_key = key ? &*key : nullptr,
                               .console = &console,
                               .cancel = &cancel,
                               .jobs_per_build = 1};
    const unsigned parallel =
        std::max(1u, std::min<unsigned>(request.jobs ? request.jobs : 1, static_cast<unsigned>(misses.size())));
    std::atomic<std::size_t> next{0};
    std::vector<std::jthread> workers;
    for (unsigned w = 0; w < parallel; ++w)
      workers.emplace_back([&] {
        for (std::size_t i = next++; i < misses.size(); i = next++) {
          BuildJob& job = *misses[i];
          const std::string name = job.plan.recipe + "/" + job.plan.tier;
          console.started(name);
          const auto start = std::chrono::steady_clock::now();
          detail::run_job(job, context);
          const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          char seconds[32];
          std::snprintf(seconds, sizeof seconds, "%.1f s", took);
          console.finished(name, job.result.status == BuildStatus::built
                                     ? std::string("built in ") + seconds
                                     : "FAILED (exit " + std::to_string(job.result.exit_code) + ") after " + seconds +
                                           "; log: " + job.result.log_file);
        }
      });
  }
  console.done();
  for (auto& job : jobs) report.builds.push_back(std::move(job.result));
  return report;
}

namespace {

// Names (artifacts, and the messages that quote them) are bytes: JSON gets
// them through util::utf8_escaped, a terminal through util::printable.
std::vector<std::string> escaped_all(const std::vector<std::string>& texts, std::string (*escape)(std::string_view)) {
  std::vector<std::string> out;
  for (const auto& t : texts) out.push_back(escape(t));
  return out;
}

// A message of several lines (a failed step's log tail), each line printable.
std::string printable_lines(std::string_view text) {
  std::string out;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find('\n', start);
    out += util::printable(text.substr(start, end - start));
    if (end == std::string_view::npos) return out;
    out += '\n';
    start = end + 1;
  }
}

}  // namespace

std::string render_build_json(const BuildReport& report) {
  using util::utf8_escaped;
  nlohmann::ordered_json builds = nlohmann::ordered_json::array();
  for (const auto& b : report.builds) {
    nlohmann::ordered_json j;
    j["recipe"] = b.recipe;
    j["tier"] = b.tier;
    j["status"] = b.status == BuildStatus::built ? "built" : b.status == BuildStatus::cached ? "cached" : "failed";
    j["key"] = b.key;
    j["artifacts"] = nlohmann::ordered_json::array();
    for (const auto& a : b.artifacts)
      j["artifacts"].push_back({{"path", utf8_escaped(a.path)},
                                {"name", utf8_escaped(a.name)},
                                {"sha256", a.sha256},
                                {"sass", a.sass},
                                {"ptx", a.ptx}});
    j["manifest"] = b.manifest.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(b.manifest);
    if (!b.errors.empty()) j["errors"] = escaped_all(b.errors, utf8_escaped);
    if (!b.warnings.empty()) j["warnings"] = escaped_all(b.warnings, utf8_escaped);
    builds.push_back(std::move(j));
  }
  nlohmann::ordered_json root;
  root["builds"] = std::move(builds);
  // The net under utf8_escaped: a string missed costs a U+FFFD, not the report.
  return root.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string render_build_text(const BuildReport& report, bool explain) {
  std::string out;
  for (const auto& b : report.builds) {
    const char* status = b.status == BuildStatus::built    ? "built"
                         : b.status == BuildStatus::cached ? "cached"
                                                           : "FAILED";
    out += b.recipe + " x " + b.tier + ": " + status;
    if (!b.key.empty()) out += " (key " + b.key.substr(0, 16) + ")";
    out += '\n';
    if (explain && !b.explain.empty())
      for (const auto& line : util::split_any(b.explain, "\n")) out += "    " + line + '\n';
    for (const auto& a : b.artifacts)
      out += "    " + util::printable(a.name) + "  sha256:" + a.sha256.substr(0, 16) + "  SASS " +
             (a.sass.empty() ? "-" : util::join(a.sass, " ")) + "  PTX " +
             (a.ptx.empty() ? "-" : util::join(a.ptx, " ")) + '\n';
    for (const auto& w : escaped_all(b.warnings, util::printable)) out += "    warning: " + w + '\n';
    for (const auto& e : b.errors) out += "    error: " + printable_lines(e) + '\n';
  }
  return out;
}

}  // namespace orc::app
