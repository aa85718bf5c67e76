#pragma once
// Slurm as it is (issue 15): jobs submitted with `sbatch --parsable`,
// followed with `squeue -O` (fields of Slurm's own, each closed by '|'),
// cancelled with `scancel`. Not `scontrol show job -o`: its Key=Value words
// carry the job's name and comment, which the job itself can set
// (`scontrol update JobId=N Comment='... JobState=COMPLETED ExitCode=0:0'`),
// so a job could write its own state; Slurm 22.05 has no --json for it.
// Nothing here knows what a job runs; the caller writes the batch script. The commands are found on PATH
// and read SLURM_CONF from the environment, as users run them.
#include <chrono>
#include <expected>
#include <filesystem>
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
  std::string time;              // --time
  std::filesystem::path output;  // --output (%j is the job ID)
  std::filesystem::path chdir;   // --chdir
  std::filesystem::path script;  // the batch script (its #! line runs it)
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

// What Slurm says of a job, from fields a job cannot set: state, reason
// and exit code are Slurm's, the nodes and partition where it placed it.
struct JobRecord {
  std::string id;
  std::string state;    // PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  std::string reason;   // "Resources", "Priority", "None", "NonZeroExitCode", "TimeLimit"
  int exit_status = 0;  // wait status 768 -> 3
  int exit_signal = 0;  // wait status 15 -> 15
  std::string nodes;    // NodeList; empty while pending
  std::string partition;
  std::string time_limit;  // as scontrol prints it: "00:01:00", "1-00:00:00", "UNLIMITED"
  std::string features;    // Features (the constraint as Slurm recorded it); empty: none
};

// What show_job asks squeue for: `squeue -h -j ID -t all -O <this>`, each
// field closed by '|'. Only the last, the feature expression, can hold a
// '|' ("sm_80|sm_90"); none of the others can, so no value moves a field.
inline constexpr std::string_view k_queue_fields =
    "JobID:|,State:|,exit_code:|,Reason:|,NodeList:|,Partition:|,TimeLimit:|,Feature:|";
// One job's line of that output; nullopt when it is not that shape (or not job `id`).
std::optional<JobRecord> parse_queue_record(std::string_view output, std::string_view id);
// squeue's "1:00" as scontrol's "00:01:00"; other words as they are.
std::string slurm_duration(std::string_view squeue_time);
// COMPLETED, FAILED, CANCELLED, TIMEOUT and the other end states.
bool finished(const JobRecord& job);

// nullopt when Slurm no longer knows the job ("Invalid job id specified":
// gone after MinJobAge); an error when squeue cannot be run or reached, or
// prints something other than the job's record.
std::expected<std::optional<JobRecord>, std::string> show_job(const std::string& id);

// The job's comment as the job last set it (`squeue -O Comment:|`): text
// the job wrote, to be read as a claim, never as Slurm's word.
std::expected<std::string, std::string> job_comment(const std::string& id);

// scancel; an error says what scancel said.
std::expected<void, std::string> cancel(const std::vector<std::string>& ids);

// One node in one partition as `sinfo -h -N -o '%N|%P|%f|%T'` lists it:
// what doctor reads to say whether slurmctld answers and whether a tier's
// partition and constraint have nodes.
struct NodeRow {
  std::string node;
  std::string partition;              // without the '*' sinfo marks the default one with
  std::vector<std::string> features;  // empty when sinfo says "(null)"
  std::string state;                  // "idle", "mixed", "down*", ...
};
// Each line of that output that has its four fields.
std::vector<NodeRow> parse_node_rows(std::string_view output);
// Runs sinfo, stopped after `timeout`; an error says what sinfo said, or
// that it did not answer in time.
std::expected<std::vector<NodeRow>, std::string> list_nodes(std::chrono::milliseconds timeout);

// Whether a node offering `features` meets `constraint` as sbatch reads the
// simple forms: "a", "a|b" (any), "a&b" or "a,b" (all). nullopt for the
// forms this does not judge (brackets, counts "a*2", mixed operators).
std::optional<bool> meets_constraint(std::string_view constraint, const std::vector<std::string>& features);

// `scontrol update JobId=ID Comment=TEXT`: a job telling its submitter its
// result without a shared file (run inside the job).
std::expected<void, std::string> set_comment(const std::string& id, const std::string& comment);

}  // namespace orc::engine::slurm
