// A build that missed the cache: scratch copy, steps in the engine, artifacts
// collected, inspected, verified and stored.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <deque>
#include <fstream>
#include <map>

#include "orchestrator/app/build/build_front.hpp"
#include "orchestrator/app/build/build_job.hpp"
#include "orchestrator/app/build/build_verify.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/scratch.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/engine/host_engine.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/site/library_needs.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app::detail {

namespace {

namespace fs = std::filesystem;

// Lines shown when a build fails.
constexpr std::size_t k_tail_lines = 50;

// Joins engine output into lines: each goes to the log file, to the console
// with the build's name in front, and into the tail kept for failures.
class BuildLog final : public engine::LogSink {
 public:
  BuildLog(const fs::path& file, std::string name, Console& console)
      : m_file(file, std::ios::binary), m_name(std::move(name)), m_console(console) {}
  ~BuildLog() override { flush(); }

  void on_output(engine::OutputStream, std::string_view bytes) override {
    m_file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    for (char c : bytes) {
      if (c == '\n')
        emit();
      else if (c != '\r')
        m_pending += c;
    }
  }
  // A line of our own (what was decided), written like the build's output.
  void note(const std::string& text) { on_output(engine::OutputStream::err, "orchestrate: " + text + "\n"); }
  // A line for the log file only (what the console already said once).
  void file_note(const std::string& text) { m_file << "orchestrate: " << text << '\n'; }
  bool streamed() const { return !m_console.terminal(); }
  void flush() {
    if (!m_pending.empty()) emit();
    m_file.flush();
  }
  const std::deque<std::string>& tail() const { return m_tail; }

 private:
  void emit() {
    m_console.output(m_name, m_pending);
    m_tail.push_back(std::move(m_pending));
    if (m_tail.size() > k_tail_lines) m_tail.pop_front();
    m_pending.clear();
  }

  std::ofstream m_file;
  std::string m_name;
  Console& m_console;
  std::string m_pending;
  std::deque<std::string> m_tail;
};

void fail(BuildJob& job, util::ExitCode code, std::string message) {
  job.result.status = BuildStatus::failed;
  job.result.exit_code = std::max(job.result.exit_code, code);
  job.result.errors.push_back(std::move(message));
}

std::unique_ptr<engine::Engine> open_engine(const RunContext& context, std::string& error) {
  if (context.discovery.kind == engine::EngineKind::host) return std::make_unique<engine::HostEngine>(context.cancel);
  auto connected = engine::DockerEngine::connect(context.discovery.socket, context.cancel);
  if (!connected) {
    error = "cannot reach the " + std::string(engine::to_string(context.discovery.kind)) + " engine at " +
            context.discovery.socket.string() + ": " + connected.error().message;
    return nullptr;
  }
  return std::make_unique<engine::DockerEngine>(std::move(*connected));
}

// The image must be in the engine, and be the one the key was made from
// (its recorded ID is job.image.engine_id); otherwise nothing runs. False
// with the result filled when it is not.
bool check_image(BuildJob& job, const RunContext& context, engine::DockerEngine& engine) {
  const compat::OfflineImage* offline = compat::find_offline_image(job.image.reference);
  const std::string remedy = offline ? "run `orchestrate images build " + std::string(offline->name) + "`"
                                     : "pull it (" + std::string(engine.name()) + " pull " + job.image.reference + ")";
  const std::string where = "the " + std::string(engine.name()) + " engine at " + context.discovery.socket.string();
  auto info = engine.inspect_image(job.image.reference);
  if (!info) {
    const auto& e = info.error();
    if (e.kind == engine::ErrorKind::not_found)
      fail(job, util::ExitCode::bad_input,
           "the build image " + job.image.reference + " is not in " + where + ": " + remedy);
    else
      fail(job, util::ExitCode::outside_failure,
           "cannot inspect the build image " + job.image.reference + " in " + where + ": " + e.message);
    return false;
  }
  if (offline && !job.image.engine_id.starts_with(info->id)) {
    fail(job, util::ExitCode::bad_input,
         "the build image " + job.image.reference + " in " + where + " is " + info->id +
             ", not the one recorded by `orchestrate images build` (" + job.image.engine_id + "): " + remedy +
             " again");
    return false;
  }
  return true;
}

// Where a failed step's compiler messages point: the build's /src and
// /build are the scratch tree's src/ and build/.
std::string tree_words(const fs::path& scratch, const RunContext& context) {
  if (context.keep_failed)
    return "the build tree is kept at " + scratch.string() + " (" + std::string(k_src_dir) + " and " +
           std::string(k_build_dir) + " in the messages are its src/ and build/)";
  return "the build tree " + scratch.string() + " is removed; --keep-failed keeps it";
}

// What a step that exited non-zero says: the step, the log, the tree. The
// log's last lines only when the console did not already stream them.
std::string step_failure(const BuildJob& job, const RunContext& context, const fs::path& scratch,
                         const std::string& program, std::size_t number, int exit_code, const BuildLog& log) {
  std::string message = "step " + std::to_string(number) + " (" + program + ") exited with " +
                        std::to_string(exit_code) + "; " + tree_words(scratch, context) +
                        "; log: " + job.result.log_file;
  if (log.streamed()) return message;
  message += "; its last " + std::to_string(log.tail().size()) + " lines:";
  for (const auto& line : log.tail()) message += "\n    " + line;
  return message;
}

engine::BuildSpec step_spec(const BuildJob& job, const fs::path& scratch, std::vector<std::string> argv) {
  engine::BuildSpec spec;
  spec.image = job.image.reference;
  spec.argv = std::move(argv);
  spec.env = job.driver.env;
  spec.host_env = engine::HostEnvironment::exact;
  spec.mounts = {
      {.host = scratch / "src", .container = std::string(k_src_dir), .access = engine::Access::read_write},
      {.host = scratch / "build", .container = std::string(k_build_dir), .access = engine::Access::read_write},
      {.host = scratch / "front", .container = std::string(k_front_dir), .access = engine::Access::read_write},
      {.host = scratch / "home", .container = std::string(k_home_dir), .access = engine::Access::read_write}};
  spec.mounts.insert(spec.mounts.end(), job.driver.mounts.begin(), job.driver.mounts.end());
  spec.mounts.insert(spec.mounts.end(), job.image.mounts.begin(), job.image.mounts.end());
  spec.working_dir = std::string(k_src_dir);
  // The build writes into our scratch directories as us, not as root.
  spec.user = std::to_string(::getuid()) + ":" + std::to_string(::getgid());
  spec.labels = {{std::string(engine::k_managed_label), "true"},
                 {"org.orchestrate.recipe", job.result.recipe},
                 {"org.orchestrate.tier", job.result.tier}};
  return spec;
}

std::string path_of(const DriverPlan& driver) {
  const auto it = std::ranges::find(driver.env, "PATH", &std::pair<std::string, std::string>::first);
  return it == driver.env.end() ? std::string("unset") : it->second;
}

// Runs every step; false (with the result filled) when one failed.
bool run_steps(BuildJob& job, const RunContext& context, engine::Engine& engine, const fs::path& scratch,
               BuildLog& log) {
  std::vector<std::vector<std::string>> steps = job.driver.pre_steps;
  steps.insert(steps.end(), job.driver.steps.begin(), job.driver.steps.end());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    log.note("step " + std::to_string(i + 1) + "/" + std::to_string(steps.size()) + ": " + util::join(steps[i], " "));
    auto result = engine.run(step_spec(job, scratch, steps[i]), log);
    log.flush();
    if (!result) {
      const auto& e = result.error();
      if (e.kind == engine::ErrorKind::cancelled)
        fail(job, util::ExitCode::outside_failure, "interrupted: the build was cancelled and its container removed");
      else if (e.engine_unreachable())
        fail(job, util::ExitCode::outside_failure,
             "the " + std::string(engine.name()) + " engine failed during the build: " + e.message);
      else if (e.kind == engine::ErrorKind::not_found && context.discovery.kind == engine::EngineKind::host)
        // Steps get a fixed PATH, not the caller's (build_drivers.hpp).
        fail(job, util::ExitCode::bad_input,
             "step " + std::to_string(i + 1) + ": " + e.message + " (the steps' PATH is " + path_of(job.driver) +
                 "); install it there, or name its directory in `env: {PATH: ...}` of the tier or recipe");
      else
        fail(job,
             e.kind == engine::ErrorKind::invalid_spec ? util::ExitCode::bad_input : util::ExitCode::outside_failure,
             "step " + std::to_string(i + 1) + ": " + e.message);
      return false;
    }
    if (result->exit_code != 0) {
      fail(job, util::ExitCode::check_failed,
           step_failure(job, context, scratch, steps[i].front(), i + 1, result->exit_code, log));
      return false;
    }
  }
  return true;
}

void store_build(BuildJob& job, const RunContext& context, const std::vector<CollectedArtifact>& files,
                 const std::vector<inspect::FileReport>& reports, const Verification& verification) {
  cache::Store& store = *context.store;
  cache::NewArtifactSet set;
  cache::Manifest& m = set.manifest;
  m.recipe = job.result.recipe;
  m.framework = std::string(recipe::framework_name(job.plan.recipe->framework));
  m.tier = job.result.tier;
  m.key = job.key;
  m.source_kind = job.source.kind;
  m.source_revision = job.source.revision;
  m.engine = std::string(engine::to_string(context.discovery.kind));
  m.image = job.image.reference;
  m.image_digest = job.image.identity();
  m.toolkit = job.plan.toolkit->version.str();
  m.cudnn = job.plan.cudnn ? job.plan.cudnn->version.str() : "";
  m.host_compiler = job.image.host_compiler;
  m.warnings = verification.warnings;
  if (context.trigger) m.trigger = *context.trigger;
  m.built_for = cache::BuiltFor{.gpus = {}, .ptx = std::string(recipe::ptx_policy_name(job.plan.tier->ptx))};
  for (const auto& gpu : job.plan.tier->gpus)
    m.built_for->gpus.push_back({.name = gpu.given_as_cc ? std::string() : gpu.name, .cc = gpu.cc.dotted()});
  for (std::size_t i = 0; i < files.size(); ++i) {
    cache::ManifestFile f{.path = files[i].name,
                          .sha256 = {},
                          .size = 0,
                          .requested_sass = arch::ArchList::sass(job.plan.archs.sass),
                          .requested_ptx = arch::ArchList::ptx(job.plan.archs.ptx),
                          .embedded_sass = {},
                          .embedded_ptx = {}};
    // What the runtime loads: fetch judges coverage from these.
    const inspect::CodeSets code = inspect::loadable_code(reports[i]);
    f.embedded_sass = arch::ArchList::sass(code.sass);
    f.embedded_ptx = arch::ArchList::ptx(code.ptx);
    m.files.push_back(std::move(f));
    set.sources.push_back(files[i].path);
  }
  site::record_needs(m, reports);
  std::map<std::string, std::vector<cache::LibraryNeed>> needs;
  for (const auto& f : m.files) needs[f.path] = f.needs;
  set.build_log = job.result.log_file;
  set.key = context.signing_key;
  set.verified = true;
  auto entry = cache::store_artifact_set(store, std::move(set));
  if (!entry)
    return fail(job, util::ExitCode::outside_failure,
                "storing the artifacts in " + store.root().string() + ": " + entry.error().message);
  // The manifest lists its files sorted by path; the report keeps the
  // order the recipe's globs found them in.
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto stored = std::ranges::find(entry->files, files[i].name, &cache::IndexedFile::path);
    if (stored == entry->files.end())
      return fail(job, util::ExitCode::outside_failure, "the index lost " + files[i].name);
    BuiltArtifact a{.name = files[i].name,
                    .path = store.blob_path(stored->sha256).string(),
                    .sha256 = stored->sha256,
                    .size = stored->size,
                    .sass = arch::ArchList::sass(reports[i].sass),
                    .ptx = arch::ArchList::ptx(reports[i].ptx)};
    a.needs = needs[files[i].name];
    job.result.artifacts.push_back(std::move(a));
  }
  if (job.driver.bazel_fingerprint) {
    const fs::path workspace = workspace_dir(store, job.result.recipe);
    if (auto ok = cache::write_file_atomic(workspace / k_bazel_fingerprint_file, *job.driver.bazel_fingerprint + "\n",
                                           store.tmp_dir());
        !ok)
      job.result.warnings.push_back("could not remember bazel's arch fingerprint: " + ok.error().message);
  }
  job.result.manifest = entry->manifest;
  job.result.status = BuildStatus::built;
  record_current(job, store);
}

void build_in(BuildJob& job, const RunContext& context, const fs::path& scratch, BuildLog& log) {
  log.note("building " + job.result.recipe + " for " + job.result.tier + " in " + job.image.reference + " (" +
           std::string(engine::to_string(context.discovery.kind)) + "), key " + job.key);
  if (context.discovery.kind == engine::EngineKind::host)
    log.file_note("host engine: the steps run as local processes on this machine, NOT ISOLATED");
  for (const auto& n : job.driver.notes) log.note(n);
  if (auto ok = copy_source_tree(job.source.dir, scratch / "src"); !ok)
    return fail(job, util::ExitCode::outside_failure, ok.error());
  std::error_code ec;
  fs::create_directories(scratch / "build", ec);
  for (const auto& f : job.driver.files)
    if (auto ok = cache::write_file_atomic(scratch / "src" / f.relative, f.text, context.store->tmp_dir()); !ok)
      return fail(job, util::ExitCode::outside_failure, ok.error().message);

  if (auto ok = stage_front(job, scratch, context.discovery.kind, front_program()); !ok)
    return fail(job, util::ExitCode::outside_failure, ok.error());

  std::string engine_error;
  auto engine = open_engine(context, engine_error);
  if (!engine) return fail(job, util::ExitCode::outside_failure, engine_error);
  if (auto* docker = dynamic_cast<engine::DockerEngine*>(engine.get()); docker && !check_image(job, context, *docker))
    return;
  const bool steps_ok = run_steps(job, context, *engine, scratch, log);
  job.result.nvcc = read_front(scratch, job.plan.recipe->nvcc);
  if (const front::CallRecord* refused = first_refusal(*job.result.nvcc)) {
    // The cause first: the step only failed because the front stopped it.
    job.result.errors.insert(job.result.errors.begin(), "the nvcc front stopped the build:\n" + refused->note);
    job.result.exit_code = std::max(job.result.exit_code, util::ExitCode::check_failed);
  }
  if (!steps_ok) return;

  if (job.plan.recipe->artifacts.empty())
    return fail(job, util::ExitCode::bad_input,
                "recipe '" + job.result.recipe + "' declares no artifacts: nothing to verify or store");
  auto files = collect_artifacts(job.plan.recipe->artifacts, {scratch / "build", scratch / "src"});
  if (!files) return fail(job, util::ExitCode::check_failed, files.error());
  if (const auto refused = unstorable_names(*files); !refused.empty()) {
    for (const auto& e : refused) fail(job, util::ExitCode::bad_input, e);
    return;
  }
  std::vector<fs::path> paths;
  for (const auto& f : *files) paths.push_back(f.path);
  std::vector<inspect::FileReport> reports = inspect::inspect_files(paths, {.modules = true});
  bool unreadable = false;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].error) {
      fail(job, util::ExitCode::check_failed, "artifact " + (*files)[i].name + ": " + *reports[i].error);
      unreadable = true;
    }
    reports[i].path = (*files)[i].name;
  }
  if (unreadable) return;
  job.result.nvcc->bypassed =
      !judged_any(*job.result.nvcc) &&
      std::ranges::any_of(reports, [](const inspect::FileReport& r) { return !r.sass.empty() || !r.ptx.empty(); });
  if (job.result.nvcc->bypassed)
    log.note(
        "no nvcc call went through orchestrate's nvcc front, yet the artifacts hold device code: the project "
        "runs nvcc by a path of its own, so its archs were checked in the binaries only");
  const Verification verification = verify_artifacts(job.plan.archs, job.plan.tier->gpus, reports);
  job.result.warnings.insert(job.result.warnings.end(), verification.warnings.begin(), verification.warnings.end());
  if (!verification.ok()) {
    for (const auto& e : verification.errors) fail(job, util::ExitCode::check_failed, "verification: " + e);
    return;
  }
  store_build(job, context, *files, reports, verification);
}

}  // namespace

void run_job(BuildJob& job, const RunContext& context) {
  const auto started = std::chrono::steady_clock::now();
  const std::string name = job.result.recipe + "-" + job.result.tier;
  std::error_code ec;
  const fs::path logs = logs_dir(*context.store);
  fs::create_directories(logs, ec);
  job.result.log_file = (logs / (name + "-" + job.key.substr(0, 12) + ".log")).string();
  // Its owner lock tells `cache gc` the tree is in use for as long as this
  // process lives, and abandoned once it is gone, however it went.
  auto scratch = cache::ScratchTree::create(context.store->tmp_dir(), name);
  if (!scratch) {
    fail(job, util::ExitCode::outside_failure,
         "creating the build's scratch tree: " + context.store->explain(scratch.error()).message);
  } else {
    {
      BuildLog log(job.result.log_file, plan_name(job.plan), *context.console);
      build_in(job, context, scratch->path(), log);
    }
    // The scratch tree is ours (the steps ran as our user), so it can go,
    // unless a failed build's is to be kept for a look.
    if (job.result.status == BuildStatus::failed && context.keep_failed) {
      scratch->keep();
      job.result.kept_tree = scratch->path().string();
    } else {
      scratch->remove();
    }
  }
  job.result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace orc::app::detail
