// Before anything runs (build_job.hpp): each planned recipe x tier gets its
// image, source, driver plan and key, and is looked up in the store.
#include <algorithm>
#include <cstdlib>
#include <thread>

#include "orchestrator/app/build/build_job.hpp"
#include "orchestrator/app/build/build_key.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/engine/host_engine.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/version.hpp"

namespace orc::app::detail {

namespace {

namespace fs = std::filesystem;

// Variables kept out of the cache key: the parallelism ones change how fast
// a build runs, not what it makes (--jobs must not rebuild). Every other
// variable a step gets is keyed: the environment is fixed (build_drivers.hpp),
// so nothing of the caller's shell reaches a step unkeyed.
constexpr std::array<std::string_view, 2> k_unkeyed_env = {"MAX_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL"};

class NullSink final : public engine::LogSink {
 public:
  void on_output(engine::OutputStream, std::string_view) override {}
};

BuildImage host_image(const HostChoice& host) {
  return BuildImage{.reference = "host",
                    .on_host = true,
                    .registry_digest = std::nullopt,
                    .engine_id = {},
                    .borrowed_toolkit = std::nullopt,
                    .cuda_home = host.toolkit.root.string(),
                    .host_compiler = {},
                    .mounts = {},
                    .toolkit = host.toolkit.version};
}

// The plan's image for a container engine, or why it cannot be used.
std::expected<BuildImage, std::string> container_image(const PlanEntry& plan, const ImageOverride* chosen) {
  if (!plan.image) return std::unexpected("no build image serves CUDA " + plan.toolkit->version.str());
  const compat::ImageChoice& choice = *plan.image;
  BuildImage image{.reference = choice.reference,
                   .on_host = false,
                   .registry_digest = std::nullopt,
                   .engine_id = {},
                   .borrowed_toolkit = std::nullopt,
                   .cuda_home = std::string(compat::k_default_host_cuda),
                   .host_compiler = choice.host_compiler,
                   .mounts = {},
                   .toolkit = choice.toolkit};
  // Debian's packaged toolkit lives in /usr (nvcc is /usr/bin/nvcc).
  if (choice.nvcc.starts_with("/usr/bin/")) image.cuda_home = "/usr";
  // The watcher's image is keyed by its registry digest.
  if (chosen && chosen->reference == choice.reference)
    if (auto digest = digest::Digest::parse(chosen->digest)) image.registry_digest = *digest;
  for (const auto& m : choice.mounts)
    image.mounts.push_back({.host = m.host,
                            .container = m.container,
                            .access = m.read_only ? engine::Access::read_only : engine::Access::read_write});
  // An image this project builds itself is keyed by the ID the engine gave
  // it (recorded by `orchestrate images build`), not by its tag: rebuilding
  // the image must rebuild what was made in it. One never built here is
  // bad local state, said before anything runs.
  if (choice.source != compat::ImageSource::official) {
    const compat::OfflineImage* offline = compat::find_offline_image(choice.reference);
    const std::string name = offline ? std::string(offline->name) : choice.reference;
    auto record = site::find_built_image(choice.reference);
    if (!record || record->id.empty())
      return std::unexpected("the build image " + choice.reference + " was never built here (no record in " +
                             site::image_state_path().string() + "): run `orchestrate images build " + name +
                             "` first");
    image.engine_id = record->id;
  }
  // The host toolkit a host-mount image borrows is part of what it builds with.
  if (choice.source == compat::ImageSource::host_mount) image.borrowed_toolkit = choice.toolkit;
  return image;
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

// On the host, the programs the steps name are found where the caller's
// PATH finds them (a cmake or python3 in a virtual environment, say): their
// directories go into the steps' fixed PATH after the front and the
// toolkit, and so into the key. Nothing else of the caller's PATH does.
void add_step_program_dirs(DriverPlan& driver, const std::string& caller_path) {
  const auto path = std::ranges::find(driver.env, "PATH", &std::pair<std::string, std::string>::first);
  if (path == driver.env.end()) return;
  std::vector<std::string> have = util::split_any(path->second, ":");
  std::vector<std::string> dirs;
  for (const auto* steps : {&driver.pre_steps, &driver.steps})
    for (const auto& step : *steps) {
      if (step.empty() || step.front().find('/') != std::string::npos) continue;
      // Already found on the fixed PATH: nothing to add.
      if (util::find_program(step.front(), path->second)) continue;
      const auto found = util::find_program(step.front(), caller_path);
      if (!found) continue;
      const std::string dir = fs::path(*found).parent_path().string();
      if (std::ranges::find(have, dir) == have.end() && std::ranges::find(dirs, dir) == dirs.end()) dirs.push_back(dir);
    }
  if (dirs.empty()) return;
  // After the front's bin and the toolkit's: the plan's nvcc stays first.
  std::vector<std::string> parts = have;
  parts.insert(parts.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(parts.size())), dirs.begin(),
               dirs.end());
  path->second = util::join(parts, ":");
}

std::vector<std::vector<std::string>> keyed_steps(const DriverPlan& driver) {
  std::vector<std::vector<std::string>> out;
  for (const auto& step : driver.steps) {
    // The -j of a default step is parallelism too.
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < step.size(); ++i) {
      if (step[i] == "-j" && i + 1 < step.size())
        ++i;
      else if (!step[i].starts_with("--jobs=") && !(step[i].starts_with("-j") && step[i].size() > 2))
        shown.push_back(step[i]);
    }
    out.push_back(std::move(shown));
  }
  return out;
}

KeyInputs key_inputs(const BuildJob& job, engine::EngineKind kind) {
  KeyInputs in{.tool_version = std::string(k_version),
               .recipe_text = canonical_recipe(*job.plan.recipe),
               .tier = job.plan.tier->name,
               .source_kind = job.source.kind,
               .source_revision = job.source.revision,
               .engine = std::string(engine::to_string(kind)),
               .image = job.image.reference,
               .image_digest = job.image.identity(),
               .toolkit = job.plan.toolkit->version.str(),
               .cudnn = job.plan.cudnn ? job.plan.cudnn->version.str() : "",
               .sass = job.plan.archs.sass_names(),
               .ptx = job.plan.archs.ptx_names(),
               .env = {},
               .steps = keyed_steps(job.driver)};
  for (const auto& [name, value] : job.driver.env)
    if (std::ranges::find(k_unkeyed_env, name) == k_unkeyed_env.end()) in.env.push_back(name + "=" + value);
  std::ranges::sort(in.env);
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
  job.result.manifest = sets->front().manifest;
  record_current(job, store);
  return true;
}

void fail(BuildJob& job, util::ExitCode code, std::string message) {
  job.result.exit_code = code;
  job.result.status = BuildStatus::failed;
  job.result.errors.push_back(std::move(message));
}

// The driver plan and the key once the image and the source are known; a
// hit fills the result.
void key_and_look_up(BuildJob& job, const PrepareContext& context) {
  const BuildPlace place = context.kind == engine::EngineKind::host ? BuildPlace::host : BuildPlace::container;
  DriverInput input{.plan = &job.plan,
                    .recipe = job.plan.recipe,
                    .place = place,
                    .cuda_home = job.image.cuda_home,
                    .jobs = context.jobs_per_build,
                    .generator = CmakeGenerator::makefiles,
                    .source_dir = job.source.dir,
                    .workspace = workspace_dir(*context.store, job.plan.recipe->name)};
  auto driver = plan_driver(input);
  if (!driver) return fail(job, util::ExitCode::bad_input, driver.error());
  job.driver = std::move(*driver);
  add_host_compiler_env(job.driver, job.image.host_compiler);
  if (place == BuildPlace::host) add_step_program_dirs(job.driver, util::env_value("PATH"));
  const KeyHasher key = hash_key(key_inputs(job, context.kind));
  job.key = key.hex();
  job.result.key = job.key;
  if (context.explain) job.result.explain = key.explain();
  load_hit(job, *context.store);
}

// The image, the source, then the key; each step that fails fills the result.
void prepare(BuildJob& job, const PrepareContext& context) {
  const PlanEntry& entry = job.plan;
  // A configuration no toolkit satisfies is the user's input (2); one this
  // host lacks the toolkit for is the world's (3): the configuration is fine.
  if (!entry.ok && entry.host_unservable)
    return fail(job, util::ExitCode::outside_failure, util::join(entry.reasons, "; "));
  if (!entry.ok) return fail(job, util::ExitCode::bad_input, "unsatisfiable: " + util::join(entry.reasons, "; "));
  job.result.toolkit = entry.toolkit->version;
  auto image = entry.host ? host_image(*entry.host) : container_image(entry, context.image_override);
  if (!image) {
    job.image_problem = true;
    return fail(job, util::ExitCode::bad_input, image.error());
  }
  job.image = std::move(*image);
  job.result.toolkit = job.image.toolkit;
  job.result.image = job.image.reference;
  NullSink quiet;
  engine::HostEngine git_runner;
  const recipe::Recipe& r = *entry.recipe;
  recipe::Source source_given = r.source;
  if (context.source_dirs && source_given.kind == recipe::Source::Kind::path)
    if (const auto it = context.source_dirs->find(r.name); it != context.source_dirs->end())
      source_given.path = it->second;
  auto source = prepare_source(source_given, workspace_dir(*context.store, r.name), git_runner, quiet);
  // A path the recipe names is the user's input; a git remote is outside.
  if (!source)
    return fail(
        job, r.source.kind == recipe::Source::Kind::path ? util::ExitCode::bad_input : util::ExitCode::outside_failure,
        "source: " + source.error());
  job.source = std::move(*source);
  key_and_look_up(job, context);
}

}  // namespace

std::string BuildImage::identity() const {
  if (on_host) return "cuda " + toolkit.str() + " at " + cuda_home;
  std::string out = !engine_id.empty() ? engine_id : registry_digest ? registry_digest->to_string() : "";
  if (borrowed_toolkit) out += (out.empty() ? "" : " + ") + std::string("host cuda ") + borrowed_toolkit->str();
  return out;
}

BuildJob prepare_job(const PlanEntry& entry, const PrepareContext& context) {
  BuildJob job;
  job.plan = entry;
  job.result.recipe = entry.recipe->name;
  job.result.tier = entry.tier->name;
  job.result.engine = context.kind;
  prepare(job, context);
  return job;
}

unsigned jobs_per_build(unsigned requested, std::size_t builds) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, (requested ? requested : cores) / static_cast<unsigned>(std::min<std::size_t>(builds, cores)));
}

void record_current(BuildJob& job, const cache::Store& store) {
  if (!job.result.manifest) return;
  if (auto written = cache::write_current(store, job.result.recipe, job.result.tier, *job.result.manifest); !written)
    job.result.warnings.push_back("could not record the current set of " + job.result.recipe + " x " + job.result.tier +
                                  ": " + written.error().message);
}

}  // namespace orc::app::detail
