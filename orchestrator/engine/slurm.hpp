#pragma once
// Slurm as it is (issue 15): jobs submitted with `sbatch --parsable`,
// followed with `scontrol show job -o` (one Key=Value line; Slurm 22.05 has
// no --json for it), cancelled with `scancel`. Nothing here knows what a job
// runs; the caller writes the batch script. The commands are found on PATH
// and read SLURM_CONF from the environment, as users run them.
#include <chrono>
#include <expected>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orc::engine::slurm {

struct JobRequest {
  std::string name;     // --job-name
  std::string comment;  // --comment
  std::string partition;
  std::string constraint;  // --constraint
  std::string gres;        // --gres
  std::string account;
  std::string qos;
  std::string time;                // --time
  std::filesystem::path output;    // --output (%j is the job ID)
  std::filesystem::path chdir;     // --chdir
  std::filesystem::path script;    // the batch script (its #! line runs it)
};

// The sbatch arguments of a request, in order (tested without Slurm).
std::vector<std::string> sbatch_argv(const JobRequest& request);

struct SubmitError {
  enum class Kind {
    invalid_feature,      // "Invalid feature specification": no node offers the constraint
    invalid_partition,    // "invalid partition specified"
    unavailable,          // "Requested node configuration is not available" (gres, CPUs, memory)
    invalid_account_qos,  // "Invalid account or account/partition combination", "Invalid qos specification"
    invalid_time,         // "Requested time limit is invalid" / exceeds the partition's
    not_running,          // sbatch missing, or the controller unreachable
    other,
  };
  Kind kind = Kind::other;
  std::string message;  // sbatch's own words
};
SubmitError::Kind classify_submit_error(std::string_view sbatch_stderr);

// The job's ID.
std::expected<std::string, SubmitError> submit(const JobRequest& request);

struct JobRecord {
  std::string id;
  std::string name;
  std::string state;     // PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, ...
  std::string reason;    // "Resources", "Priority", "None", "NonZeroExitCode", "TimeLimit"
  int exit_status = 0;   // ExitCode=3:0 -> 3
  int exit_signal = 0;   // ExitCode=0:15 -> 15
  std::string nodes;     // NodeList
  std::string partition;
  std::string features;  // Features (the constraint as Slurm recorded it)
  std::string comment;
  std::string time_limit;
  std::map<std::string, std::string> fields;  // everything, as read
};
// One line of `scontrol show job -o`.
JobRecord parse_job_record(std::string_view line);
// COMPLETED, FAILED, CANCELLED, TIMEOUT and the other end states.
bool finished(const JobRecord& job);

// nullopt when Slurm no longer knows the job ("Invalid job id specified":
// gone after MinJobAge); an error when scontrol cannot be run or reached.
std::expected<std::optional<JobRecord>, std::string> show_job(const std::string& id);

// scancel; an error says what scancel said.
std::expected<void, std::string> cancel(const std::vector<std::string>& ids);

// `scontrol update JobId=ID Comment=TEXT`: a job telling its submitter its
// result without a shared file (run inside the job).
std::expected<void, std::string> set_comment(const std::string& id, const std::string& comment);

}  // namespace orc::engine::slurm
