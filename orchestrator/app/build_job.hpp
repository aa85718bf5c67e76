#pragma once
// One recipe x tier build as build.cpp prepares it and build_run.cpp runs
// it (private to the app module).
#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "orchestrator/app/build.hpp"
#include "orchestrator/app/build_drivers.hpp"
#include "orchestrator/app/build_source.hpp"
#include "orchestrator/app/plan.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/engine.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::app::detail {

// The image a build runs in, and what it needs from the host.
struct BuildImage {
  std::string reference;  // "host" for the host engine
  std::string digest;     // "" when unknown
  std::string cuda_home;  // in the build's file system
  std::string host_compiler;
  std::vector<engine::Mount> mounts;  // the host toolkit of a host-mount image
};

struct BuildJob {
  const recipe::Recipe* recipe = nullptr;
  PlanEntry plan;
  SourceState source;
  BuildImage image;
  DriverPlan driver;
  std::string key;
  BuildResult result;
};

// Where a run's output goes: stderr (serialized between parallel builds)
// and the build's log file; the last lines are kept for a failure report.
struct Console {
  std::ostream& stream;
  std::mutex mutex;
  void line(const std::string& text) {
    std::scoped_lock lock(mutex);
    stream << text << '\n' << std::flush;
  }
};

struct RunContext {
  engine::Discovery discovery;
  Store* store = nullptr;
  Console* console = nullptr;
  const engine::CancelFlag* cancel = nullptr;
  unsigned jobs_per_build = 1;
};

// Runs a job that missed the cache: fills job.result (status, artifacts,
// manifest, errors, exit code). Never throws for a failed build.
void run_job(BuildJob& job, const RunContext& context);

}  // namespace orc::app::detail
