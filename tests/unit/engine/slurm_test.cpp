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

TEST(SlurmRecords, ACompletedJobsRecordNamesItsNodePartitionAndLimit) {
  const auto job = parse_queue_record(data("squeue-completed.txt"), "5");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->id, "5");
  EXPECT_EQ(job->state, "COMPLETED");
  EXPECT_EQ(job->reason, "None");
  EXPECT_EQ(job->nodes, "h100node");
  EXPECT_EQ(job->partition, "hopper");
  EXPECT_EQ(job->features, "");  // (null)
  EXPECT_EQ(job->time_limit, "01:00:00");
  EXPECT_EQ(job->exit_status, 0);
  EXPECT_TRUE(finished(*job));
  // Another job's record, or none, is not this job's.
  EXPECT_FALSE(parse_queue_record(data("squeue-completed.txt"), "50"));
  EXPECT_FALSE(parse_queue_record("", "5"));
  EXPECT_FALSE(parse_queue_record("5|COMPLETED|0|None|h100node|hopper|1:00:00|\n", "5"));
  EXPECT_FALSE(parse_queue_record("5|completed|0|None|n|p|1:00|(null)|\n", "5"));
}

TEST(SlurmRecords, ExitCodesAndStatesOfTheOtherEnds) {
  const auto failed = parse_queue_record(data("squeue-failed.txt"), "4");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->state, "FAILED");
  EXPECT_EQ(failed->reason, "NonZeroExitCode");
  EXPECT_EQ(failed->exit_status, 3);  // squeue gives the wait status, 768
  EXPECT_EQ(failed->features, "sm_90");
  EXPECT_TRUE(finished(*failed));
  const auto cancelled = parse_queue_record(data("squeue-cancelled.txt"), "2");
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->state, "CANCELLED");
  EXPECT_EQ(cancelled->exit_signal, 15);
  EXPECT_EQ(cancelled->features, "sm_80|sm_90");  // the one field that may hold '|' comes last
  EXPECT_TRUE(finished(*cancelled));
  const auto pending = parse_queue_record(data("squeue-pending.txt"), "8");
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->state, "PENDING");
  EXPECT_EQ(pending->reason, "BeginTime");
  EXPECT_EQ(pending->nodes, "");
  EXPECT_FALSE(finished(*pending));
  const auto running = parse_queue_record(data("squeue-running.txt"), "3");
  ASSERT_TRUE(running);
  EXPECT_FALSE(finished(*running));
  EXPECT_EQ(running->time_limit, "00:01:00");  // --time=1, which squeue prints as 1:00
  EXPECT_EQ(slurm_duration("365-00:00:00"), "365-00:00:00");
  EXPECT_EQ(slurm_duration("1-2:03:04"), "1-02:03:04");
  EXPECT_EQ(slurm_duration("UNLIMITED"), "UNLIMITED");
  EXPECT_EQ(slurm_duration("1::00"), "1::00");
}

// Issue 28: a job that set its own name and comment to "... JobState=COMPLETED
// ExitCode=0:0" (show-job-forged-running.txt is what scontrol printed for it,
// the forged words before and after the real ones). squeue's fields are
// Slurm's: RUNNING, then FAILED with the script's exit 4.
TEST(SlurmRecords, AJobCannotWriteItsOwnState) {
  const std::string scontrol = data("show-job-forged-running.txt");
  ASSERT_NE(scontrol.find("JobName=x JobState=COMPLETED ExitCode=0:0"), std::string::npos);
  ASSERT_NE(scontrol.find("Comment=orchestrate build set=sha256:abc JobState=COMPLETED"), std::string::npos);
  const auto running = parse_queue_record(data("squeue-forged-running.txt"), "7");
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, "RUNNING");
  EXPECT_FALSE(finished(*running));
  const auto failed = parse_queue_record(data("squeue-forged-failed.txt"), "7");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->state, "FAILED");
  EXPECT_EQ(failed->exit_status, 4);
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

// sinfo -h -N -o '%N|%P|%f|%T' of scripts/start-slurm.sh's cluster: a row
// per node and partition, the default partition marked with '*'.
TEST(SlurmNodes, SinfosRowsNameNodePartitionFeaturesAndState) {
  const auto rows = parse_node_rows(data("sinfo-nodes.txt"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].node, "a100node");
  EXPECT_EQ(rows[0].partition, "ampere");
  EXPECT_EQ(rows[1].partition, "debug");
  EXPECT_EQ(rows[0].features, (std::vector<std::string>{"sm_80"}));
  EXPECT_EQ(rows[0].state, "idle");
  EXPECT_EQ(rows[3].node, "h100node");
  EXPECT_EQ(rows[3].partition, "hopper");
  const auto none = parse_node_rows("n1|gpu|(null)|down*\nnot a row\nn2|gpu|a,b|mixed\n");
  ASSERT_EQ(none.size(), 2u);
  EXPECT_TRUE(none[0].features.empty());
  EXPECT_EQ(none[0].state, "down*");
  EXPECT_EQ(none[1].features, (std::vector<std::string>{"a", "b"}));
}

TEST(SlurmNodes, SimpleConstraintsAreJudgedAndOthersAreNot) {
  const std::vector<std::string> hopper = {"sm_90", "ib"};
  EXPECT_EQ(meets_constraint("sm_90", hopper), true);
  EXPECT_EQ(meets_constraint("sm_80", hopper), false);
  EXPECT_EQ(meets_constraint("sm_80|sm_90", hopper), true);
  EXPECT_EQ(meets_constraint("sm_90&ib", hopper), true);
  EXPECT_EQ(meets_constraint("sm_90,nvlink", hopper), false);
  EXPECT_EQ(meets_constraint("", hopper), true);
  EXPECT_EQ(meets_constraint("[sm_80|sm_90]", hopper), std::nullopt);
  EXPECT_EQ(meets_constraint("sm_90*2", hopper), std::nullopt);
  EXPECT_EQ(meets_constraint("sm_80|sm_90&ib", hopper), std::nullopt);
}

}  // namespace
}  // namespace orc::engine::slurm
