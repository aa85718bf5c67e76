#pragma once
// One recipe x tier build as build.cpp prepares it and build_run.cpp runs
// it (private to the app module).
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/build/build_drivers.hpp"
#include "orchestrator/app/build/build_source.hpp"
#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/digest/digest.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/engine.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::app::detail {

// The image a build runs in, and what it needs from the host.
// Where a build runs, and what identifies it: each kind of identity in its
// own field. identity() is the one text the cache key hashes and the
// manifest signs as "image_digest".
struct BuildImage {
  std::string reference;  // "host" for the host engine
  bool on_host = false;   // the host engine: no image, the host's toolkit at cuda_home
  // The watcher's image: its manifest digest in the registry it was pulled from.
  std::optional<digest::Digest> registry_digest;
  // An image this project built (offline or host-mount): the ID the engine
  // gave it, as `orchestrate images build` recorded it.
  std::string engine_id;
  // A host-mount image: the host toolkit it borrows (by mounts).
  std::optional<util::Version> borrowed_toolkit;
  std::string cuda_home;  // in the build's file system
  std::string host_compiler;
  std::vector<engine::Mount> mounts;  // the host toolkit of a host-mount image
  util::Version toolkit;              // what its nvcc is: 12.4.1, the host's 13.0.88

  // "cuda 13.0.88 at /usr/local/cuda" on the host; else the engine ID, or
  // the registry digest, with " + host cuda 12.4" for a borrowed toolkit;
  // "" when nothing identifies it.
  std::string identity() const;
};

struct BuildJob {
  PlanEntry plan;
  SourceState source;
  BuildImage image;
  DriverPlan driver;
  std::string key;
  BuildResult result;
  bool image_problem = false;  // the image could not be chosen (a reachable engine is asked first)
};

// What preparing a job needs besides its plan entry.
struct PrepareContext {
  engine::EngineKind kind = engine::EngineKind::host;
  const cache::Store* store = nullptr;
  unsigned jobs_per_build = 1;
  bool explain = false;
  const ImageOverride* image_override = nullptr;                              // the watcher's image, when it chose one
  const std::map<std::string, std::filesystem::path>* source_dirs = nullptr;  // BuildRequest's
};

// The image, source, driver plan and key of one plan entry, and the store
// looked up: a hit comes back cached, a problem failed with its exit code.
BuildJob prepare_job(const PlanEntry& entry, const PrepareContext& context);

// A hit's artifacts get their needs from its manifest, read back from the
// store; a manifest that cannot be read leaves them without.
void attach_needs(BuildResult& result, const cache::Store& store);

// The parallelism each of `builds` builds gets from --jobs (0: the cores).
unsigned jobs_per_build(unsigned requested, std::size_t builds);

// Where a run's progress goes (stderr), serialized between parallel builds.
// Plain mode (a log file, CI) prints every line of every build with its
// name in front. Terminal mode keeps one status line at the bottom, redrawn
// in place: how many builds run, for how long, and the latest line of
// output; only orchestrate's own lines and each build's outcome scroll
// above it. Either way each build's whole output is in its log file.
class Console {
 public:
  Console(std::ostream& stream, bool terminal);
  // A line that stays (what was decided, a build's outcome).
  void line(const std::string& text);
  // A line of a build's output.
  void output(const std::string& build, const std::string& text);
  void started(const std::string& build);
  void finished(const std::string& build, const std::string& outcome);
  // Clears the status line (the report follows on stdout).
  void done();
  // Whether build output is summarized (true) or streamed line by line.
  bool terminal() const { return m_terminal; }

 private:
  void draw_status();
  void clear_status();

  std::ostream& m_stream;
  bool m_terminal;
  std::mutex m_mutex;
  std::vector<std::string> m_running;
  std::string m_latest;
  std::chrono::steady_clock::time_point m_start;
  bool m_status_shown = false;
};

// Beside the store's own layout (cache/store.hpp), what builds keep there:
//   logs/                   build logs as they are written
//   workspaces.v1/<recipe>/ git checkouts and bazel output roots kept between builds
inline std::filesystem::path logs_dir(const cache::Store& store) { return store.root() / "logs"; }
inline std::filesystem::path workspace_dir(const cache::Store& store, std::string_view recipe) {
  return store.root() / "workspaces.v1" / recipe;
}

struct RunContext {
  engine::Discovery discovery;
  cache::Store* store = nullptr;
  const cache::SigningKey* signing_key = nullptr;  // null: stored unsigned
  Console* console = nullptr;
  const engine::CancelFlag* cancel = nullptr;
  unsigned jobs_per_build = 1;
  bool keep_failed = false;
  const cache::RebuildTrigger* trigger = nullptr;  // recorded in the manifest of what is stored
};

// `image:` on the recipe: the image REPO:TIER of the built (or cached) set,
// stamped with `stamp: true` (build_image.cpp); a failure fails the job.
void make_image(BuildJob& job, const engine::Discovery& discovery);

// Runs a job that missed the cache: fills job.result (status, artifacts,
// manifest, errors, exit code). Never throws for a failed build.
void run_job(BuildJob& job, const RunContext& context);

// Makes the job's set (built or a hit) the current set of its recipe x tier
// (cache/current.hpp); a failure to record it is a warning of the build.
void record_current(BuildJob& job, const cache::Store& store);

}  // namespace orc::app::detail
