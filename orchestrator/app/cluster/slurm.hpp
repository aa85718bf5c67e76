#pragma once
// `orchestrate build TIER... --engine slurm` and `orchestrate smoke TIER...
// --engine slurm` (issue 15): one Slurm job per recipe x tier, on the tier's
// nodes (its `slurm:` placement, else a constraint derived from its GPUs).
// Each job runs this orchestrate on the node (`orchestrate job build|smoke`)
// with a store of its own, pushes what it made to the registry remote and
// names the set (and a build's cache key) in its job comment; the submitting
// side follows the jobs with squeue (never sbatch --wait), streams their
// output files, says why a job waits, pulls each result from the registry
// and verifies it as any pull does (a build's only when it was built for
// the key the comment names: slurm_comment.hpp), and cancels its jobs on
// SIGINT/SIGTERM. Nothing travels
// through a shared file system but the jobs' output files.
#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/engine/engine.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

enum class SlurmWork { build, smoke };

struct SlurmRequest {
  SlurmWork work = SlurmWork::build;
  std::filesystem::path config;
  std::vector<std::string> tiers;
  std::vector<std::string> recipes;  // empty: every recipe of each tier
  std::string node_engine;           // the jobs' --engine (docker, podman, host); empty: each node discovers
  std::filesystem::path store_root;  // the submitter's store; empty: the default
  std::filesystem::path work_dir;    // job scripts and output files; empty: <cache>/slurm.v1/<time>-<pid>
  std::filesystem::path orchestrate;  // what the jobs run; empty: this executable
  std::ostream* progress = nullptr;   // job states and their output (stderr)
  engine::CancelFlag* cancel = nullptr;  // null: SIGINT/SIGTERM handlers for the run
  std::chrono::milliseconds poll{1000};
};

struct SlurmJob {
  std::string recipe;
  std::string tier;
  std::string id;         // empty: never submitted
  std::string state;      // Slurm's last JobState
  std::string reason;     // its last Reason
  std::string nodes;      // where it ran
  std::string partition;  // as Slurm recorded it
  std::string features;   // the constraint as Slurm recorded it
  std::filesystem::path output;
  std::string set;  // the set it pushed and the submitter pulled ("sha256:...")
  std::string key;  // a build's cache key, as the node computed it (its image's digest is in it)
  std::string message;
  util::ExitCode exit_code = util::ExitCode::ok;
};

struct SlurmReport {
  SlurmWork work = SlurmWork::build;
  std::vector<SlurmJob> jobs;
  bool cancelled = false;
  util::ExitCode exit_code() const;
};

// Where a tier's jobs go: its `slurm:` fields, else the constraint its
// GPUs' compute capabilities make ("sm_90", "sm_80|sm_90" for a mixed
// tier), and for smoke jobs one GPU of the tier ("gpu:1").
recipe::TierSlurm slurm_placement(const recipe::Tier& tier, SlurmWork work);

// Throws util::Failure: bad_input (no remote, an unknown tier or recipe),
// outside_failure (sbatch or scontrol unusable). Job failures are in the report.
SlurmReport slurm_dispatch(const SlurmRequest& request);

// "build" or "smoke", as the job's command line and the reports name it.
std::string_view work_name(SlurmWork w);

// What a job runs on its node (`orchestrate job build|smoke`): the build (or
// the pull and smoke run of `set`) into a store of its own, the push, and
// the set's digest written into the job's comment. Its exit code is the
// job's.
struct JobRunRequest {
  SlurmWork work = SlurmWork::build;
  std::filesystem::path config;
  std::string recipe;
  std::string tier;
  std::string set;          // smoke: the set to smoke-test
  std::string node_engine;  // build: --engine
  // build: a source snapshot (sha256:..., source_snapshot.hpp) fetched from
  // the remote, checked, and built in place of the recipe's local path.
  std::string source;
  std::ostream* out = nullptr;
};
util::ExitCode run_job(const JobRunRequest& request);

}  // namespace orc::app
