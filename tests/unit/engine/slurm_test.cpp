// Slurm's records and errors as Slurm 22.05 prints them (slurm-data/), and
// the sbatch command line a job request makes; no cluster needed.
#include "orchestrator/engine/slurm.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace orc::engine::slurm {
namespace {

std::string data(const std::string& name) {
  std::ifstream in(std::string(ORC_SOURCE_DIR) + "/tests/unit/engine/slurm-data/" + name);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(SlurmRecords, ACompletedJobsRecordNamesItsNodeConstraintAndComment) {
  const JobRecord job = parse_job_record(data("show-job-completed.txt"));
  EXPECT_EQ(job.id, "1");
  EXPECT_EQ(job.name, "orc-build-lib-tier-hopper");
  EXPECT_EQ(job.state, "COMPLETED");
  EXPECT_EQ(job.reason, "None");
  EXPECT_EQ(job.nodes, "h100node");
  EXPECT_EQ(job.partition, "debug");
  EXPECT_EQ(job.features, "sm_90");
  // A comment's words with '=' in them are its words, not keys.
  EXPECT_EQ(job.comment, "orchestrate build recipe=lib tier=tier-hopper");
  EXPECT_EQ(job.time_limit, "UNLIMITED");
  EXPECT_EQ(job.exit_status, 0);
  EXPECT_TRUE(finished(job));
}

TEST(SlurmRecords, ExitCodesAndStatesOfTheOtherEnds) {
  const JobRecord failed = parse_job_record(data("show-job-failed.txt"));
  EXPECT_EQ(failed.state, "FAILED");
  EXPECT_EQ(failed.reason, "NonZeroExitCode");
  EXPECT_EQ(failed.exit_status, 3);
  EXPECT_TRUE(finished(failed));
  const JobRecord cancelled = parse_job_record(data("show-job-cancelled.txt"));
  EXPECT_EQ(cancelled.state, "CANCELLED");
  EXPECT_TRUE(finished(cancelled));
  const JobRecord pending = parse_job_record(data("show-job-pending.txt"));
  EXPECT_EQ(pending.state, "PENDING");
  EXPECT_EQ(pending.nodes, "");
  EXPECT_FALSE(finished(pending));
  EXPECT_FALSE(finished(parse_job_record("JobId=9 JobState=RUNNING Reason=None")));
  EXPECT_FALSE(finished(parse_job_record("JobId=9 JobState=COMPLETING")));
  EXPECT_TRUE(finished(parse_job_record("JobId=9 JobState=TIMEOUT Reason=TimeLimit")));
}

TEST(SlurmSubmit, SbatchsRefusalsAreTold) {
  EXPECT_EQ(classify_submit_error(data("sbatch-invalid-feature.txt")), SubmitError::Kind::invalid_feature);
  EXPECT_EQ(classify_submit_error(data("sbatch-unavailable.txt")), SubmitError::Kind::unavailable);
  EXPECT_EQ(classify_submit_error(data("sbatch-invalid-partition.txt")), SubmitError::Kind::invalid_partition);
  EXPECT_EQ(classify_submit_error("sbatch: error: Batch job submission failed: Unable to contact slurm controller "
                                  "(connect failure)"),
            SubmitError::Kind::not_running);
  EXPECT_EQ(classify_submit_error("sbatch: error: something new"), SubmitError::Kind::other);
}

TEST(SlurmSubmit, TheCommandLineHasEveryFieldSetAndNoOther) {
  const std::vector<std::string> argv = sbatch_argv({.name = "orc-build-lib-t",
                                                     .comment = "orchestrate build recipe=lib tier=t",
                                                     .partition = "hopper",
                                                     .constraint = "sm_80|sm_90",
                                                     .gres = "",
                                                     .account = "",
                                                     .qos = "",
                                                     .time = "30",
                                                     .output = "/w/lib--t-%j.out",
                                                     .chdir = "/w",
                                                     .script = "/w/lib--t.sh"});
  EXPECT_EQ(argv, (std::vector<std::string>{"sbatch", "--parsable", "--job-name=orc-build-lib-t",
                                            "--comment=orchestrate build recipe=lib tier=t", "--partition=hopper",
                                            "--constraint=sm_80|sm_90", "--time=30", "--output=/w/lib--t-%j.out",
                                            "--chdir=/w", "/w/lib--t.sh"}));
}

}  // namespace
}  // namespace orc::engine::slurm
