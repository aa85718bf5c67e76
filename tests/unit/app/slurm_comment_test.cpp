// What a Slurm job hands back in its comment (issue 28): the submitter takes
// a set and key from it only in exactly the words `orchestrate job` writes,
// for this job's recipe and tier. The comment of the job that forged its
// state (engine/slurm-data/squeue-forged-comment.txt, as squeue printed it)
// names no key, and its set is no digest: refused, its words shown escaped.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "orchestrator/app/cluster/slurm_comment.hpp"

namespace orc::app {
namespace {

const std::string k_key(64, 'a');
const std::string k_set = "sha256:" + std::string(64, 'b');

TEST(SlurmComment, TheWordsRunJobWritesAreReadBack) {
  const std::string build = handed_back_comment(SlurmWork::build, "lib", "tier-a", {.key = k_key, .set = k_set});
  EXPECT_EQ(build, "orchestrate build recipe=lib tier=tier-a key=" + k_key + " set=" + k_set);
  const auto read = read_handed_back(build, SlurmWork::build, "lib", "tier-a");
  ASSERT_TRUE(read) << read.error();
  EXPECT_EQ(read->key, k_key);
  EXPECT_EQ(read->set, k_set);
  const std::string smoke = handed_back_comment(SlurmWork::smoke, "lib", "tier-a", {.key = {}, .set = k_set});
  EXPECT_EQ(smoke, "orchestrate smoke recipe=lib tier=tier-a set=" + k_set);
  EXPECT_TRUE(read_handed_back(smoke, SlurmWork::smoke, "lib", "tier-a"));
}

TEST(SlurmComment, AnythingElseIsRefusedAndSaidEscaped) {
  const auto refused = [](const std::string& comment, SlurmWork work = SlurmWork::build) {
    const auto read = read_handed_back(comment, work, "lib", "tier-a");
    return read ? std::string("(taken)") : read.error();
  };
  const std::string good = "orchestrate build recipe=lib tier=tier-a key=" + k_key + " set=" + k_set;
  // Slurm's words after the set, as the forging job wrote them.
  EXPECT_EQ(refused(good + " JobState=COMPLETED ExitCode=0:0"),
            "its comment is not what `orchestrate job` writes for lib/tier-a (words after the set): '" +
                good.substr(0, 160) + "...'");
  EXPECT_NE(refused(good + " ").find("(words after the set)"), std::string::npos);
  // Another pair's result, or another work's.
  EXPECT_NE(refused("orchestrate build recipe=lib tier=tier-b key=" + k_key + " set=" + k_set)
                .find("(expected 'orchestrate build recipe=lib tier=tier-a ...')"),
            std::string::npos);
  EXPECT_NE(refused(good, SlurmWork::smoke).find("expected 'orchestrate smoke"), std::string::npos);
  // A build names its key; digests are lower-case hex of their length.
  EXPECT_NE(refused("orchestrate build recipe=lib tier=tier-a set=" + k_set).find("(no key=<64 hex digits>)"),
            std::string::npos);
  EXPECT_NE(refused("orchestrate build recipe=lib tier=tier-a key=" + k_key + " set=sha256:abc")
                .find("(no set=sha256:<64 hex digits>)"),
            std::string::npos);
  EXPECT_NE(refused("orchestrate build recipe=lib tier=tier-a key=" + std::string(64, 'A') + " set=" + k_set)
                .find("(no key="),
            std::string::npos);
  // Control characters in a comment are shown as \xNN.
  EXPECT_EQ(refused("\x1b[2Jorchestrate"),
            "its comment is not what `orchestrate job` writes for lib/tier-a (expected 'orchestrate build "
            "recipe=lib tier=tier-a ...'): '\\x1b[2Jorchestrate'");
  std::ifstream in(std::string(ORC_SOURCE_DIR) + "/tests/unit/engine/slurm-data/squeue-forged-comment.txt");
  std::stringstream forged;
  forged << in.rdbuf();
  std::string text = forged.str();
  ASSERT_TRUE(text.ends_with("|\n"));
  text.resize(text.size() - 2);
  EXPECT_NE(refused(text).find("(expected 'orchestrate build recipe=lib tier=tier-a ...')"), std::string::npos);
}

}  // namespace
}  // namespace orc::app
