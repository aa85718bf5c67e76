// `build` and `smoke` through Slurm (issue 15), against a real one-host
// cluster this binary starts (scripts/start-slurm.sh: munged, slurmctld and
// two slurmd with fake GPUs, a100node in partition ampere with feature
// sm_80, h100node in hopper with sm_90, both in the default partition) and
// a Debian docker-registry as the remote. Each job runs this build's
// orchestrate on its node with a store of its own and the host engine
// (nvcc 13.0 at /usr/local/cuda), pushes, and names its set in its job
// comment; the suite checks, from Slurm's own job records, that each tier's
// job ran on its node, and that what it made came back verified through the
// registry. Then the ways a job goes wrong: a constraint no node offers, a
// failing build, a job cancelled by SIGTERM's flag, a job past its time
// limit; each with its own message and exit code, no job left behind, and
// nothing unverified stored. And a job that writes its own result into its
// comment (issue 28) is not believed: Slurm's fields say its state.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "orchestrator/app/cluster/slurm.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/engine/slurm.hpp"
#include "tests/integration/process.hpp"
#include "tests/integration/registry_process.hpp"
#include "tests/integration/watched_output.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using util::ExitCode;

class SlurmSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) {
      s_skip = "slurmd and munged need root (run the suite as root, as CI does)";
      return;
    }
    if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) {
      s_skip = "no CUDA toolkit at /usr/local/cuda here: the jobs build with it";
      return;
    }
    s_dir = std::make_unique<TempDir>("orc-slurm-it");
    const auto started =
        run_process({std::string(ORC_SOURCE_DIR) + "/scripts/start-slurm.sh", (s_dir->path() / "slurm").string()});
    if (started.exit_code != 0) {
      s_error = "start-slurm.sh failed: " + started.output;
      return;
    }
    ::setenv("SLURM_CONF", (s_dir->path() / "slurm" / "slurm.conf").c_str(), 1);
    s_registry = std::make_unique<RegistryProcess>(s_dir->path() / "registry");
    if (!s_registry->error().empty()) s_error = s_registry->error();
    ::setenv("ORCHESTRATE_KEYS_DIR", (s_dir->path() / "keys").c_str(), 1);
    ::setenv("ORCHESTRATE_CACHE_DIR", (s_dir->path() / "cache").c_str(), 1);
    ::setenv("ORCHESTRATE_HOST_TOOLKITS", "/usr/local/cuda", 1);
    ::unsetenv("ORCHESTRATE_REMOTE");
    ::unsetenv("DOCKER_HOST");
  }
  static void TearDownTestSuite() {
    if (s_dir) run_process({std::string(ORC_SOURCE_DIR) + "/scripts/stop-slurm.sh", (s_dir->path() / "slurm").string()});
    s_registry.reset();
    s_dir.reset();
    for (const char* v : {"SLURM_CONF", "ORCHESTRATE_KEYS_DIR", "ORCHESTRATE_CACHE_DIR", "ORCHESTRATE_HOST_TOOLKITS"})
      ::unsetenv(v);
  }
  void SetUp() override {
    if (!s_skip.empty()) GTEST_SKIP() << s_skip;
    ASSERT_TRUE(s_error.empty()) << s_error;
    write_config();
  }

  // The suite's configuration; `more` adds recipes.
  void write_config(const std::string& more = {}) {
    std::ofstream(m_config) << "remote: " << s_registry->url("team/artifacts") << "\n"
                            << "tiers:\n"
                            << "  tier-ampere:\n    gpus: [A100]\n    slurm: {partition: ampere}\n"
                            << "  tier-hopper:\n    gpus: [H100]\n"
                            << "  tier-next:\n    gpus: [B200]\n    slurm: {partition: hopper}\n"
                            << "  tier-slow:\n    gpus: [A100]\n    slurm: {partition: ampere, time: \"1\"}\n"
                            << "recipes:\n"
                            << recipe("lib", "[tier-ampere, tier-hopper, tier-next]",
                                      "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n"
                                      "      - cmake --build build\n")
                            << recipe("broken", "[tier-ampere]", "      - sh -c 'echo the build breaks here; exit 1'\n")
                            << recipe("sleeper", "[tier-hopper, tier-slow]", "      - sleep 300\n") << more;
  }

  static std::string recipe(const std::string& name, const std::string& tiers, const std::string& steps) {
    return "  - name: " + name + "\n    framework: cmake\n    source: {path: " + std::string(ORC_SOURCE_DIR) +
           "/tests/integration/nested-project}\n    tiers: " + tiers + "\n    build:\n" + steps +
           "    artifacts: [\"**/libx.so\"]\n";
  }

  app::SlurmReport dispatch(app::SlurmWork work, std::vector<std::string> tiers, std::vector<std::string> recipes,
                            std::ostream& progress = std::cout, engine::CancelFlag* cancel = nullptr) {
    engine::CancelFlag own;
    const auto start = std::chrono::steady_clock::now();
    app::SlurmReport report = app::slurm_dispatch(app::SlurmRequest{.work = work,
                                                                    .config = m_config,
                                                                    .tiers = std::move(tiers),
                                                                    .recipes = std::move(recipes),
                                                                    .node_engine = "host",
                                                                    .store_root = m_store,
                                                                    .work_dir = m_dir.path() / "jobs",
                                                                    .orchestrate = ORC_BINARY,
                                                                    .progress = &progress,
                                                                    .cancel = cancel ? cancel : &own,
                                                                    .poll = std::chrono::milliseconds(300)});
    std::cout << "slurm dispatch in " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
              << " s:\n"
              << cli::render_slurm_text(report);
    return report;
  }

  // Jobs Slurm still has that are not finished: none may be left behind.
  static std::string live_jobs() {
    const auto q = run_process({"squeue", "-h", "-o", "%i %j %T"});
    return q.output;
  }

  std::size_t verified_sets(const std::string& recipe, const std::string& tier) {
    auto store = cache::Store::open(m_store);
    if (!store) return 0;
    auto sets = store->index().list({.recipe = recipe, .tier = tier, .key = {}, .verified_only = true});
    return sets ? sets->size() : 0;
  }

  TempDir m_dir{"orc-slurm-case"};
  fs::path m_config = m_dir.path() / "orchestrate.yaml";
  fs::path m_store = m_dir.path() / "store";
  static inline std::unique_ptr<TempDir> s_dir;
  static inline std::unique_ptr<RegistryProcess> s_registry;
  static inline std::string s_skip;
  static inline std::string s_error;
};

TEST_F(SlurmSuite, EachTiersBuildRunsOnItsNodeAndComesBackVerifiedThroughTheRegistry) {
  const app::SlurmReport report = dispatch(app::SlurmWork::build, {"tier-ampere", "tier-hopper"}, {"lib"});
  ASSERT_EQ(report.jobs.size(), 2u);
  EXPECT_EQ(report.exit_code(), ExitCode::ok);
  const app::SlurmJob& ampere = report.jobs[0];
  const app::SlurmJob& hopper = report.jobs[1];
  // Slurm's own records: where each ran, under which placement.
  EXPECT_EQ(ampere.state, "COMPLETED") << ampere.message;
  EXPECT_EQ(ampere.nodes, "a100node");
  EXPECT_EQ(ampere.partition, "ampere");
  EXPECT_EQ(ampere.features, "sm_80");
  EXPECT_EQ(hopper.state, "COMPLETED") << hopper.message;
  EXPECT_EQ(hopper.nodes, "h100node");
  EXPECT_EQ(hopper.partition, "debug");  // no partition named: the default, the constraint picks the node
  EXPECT_EQ(hopper.features, "sm_90");
  // Each result pulled from the registry into this store, verified.
  for (const auto* job : {&ampere, &hopper}) {
    ASSERT_TRUE(job->set.starts_with("sha256:")) << job->message;
    EXPECT_EQ(job->key.size(), 64u) << job->key;  // the node's cache key, from the job's comment
    EXPECT_EQ(verified_sets("lib", job->tier), 1u) << job->tier;
    // The job's output file names the node it ran on.
    std::ifstream out(job->output);
    std::stringstream text;
    text << out.rdbuf();
    EXPECT_NE(text.str().find("(" + job->nodes + ")"), std::string::npos) << text.str();
  }
  EXPECT_EQ(live_jobs(), "");

  // smoke through Slurm: the job runs on the tier's node and reports what
  // that node has. These nodes have no GPU and no driver: exit 3, said by
  // the node, and no attestation comes back.
  std::ostringstream progress;
  const app::SlurmReport smoked = dispatch(app::SlurmWork::smoke, {"tier-hopper"}, {"lib"}, progress);
  ASSERT_EQ(smoked.jobs.size(), 1u);
  EXPECT_EQ(smoked.jobs[0].nodes, "h100node");
  EXPECT_EQ(smoked.jobs[0].features, "sm_90");
  EXPECT_EQ(smoked.exit_code(), ExitCode::outside_failure) << smoked.jobs[0].message;
  EXPECT_NE(smoked.jobs[0].message.find("failed on h100node with exit code 3"), std::string::npos)
      << smoked.jobs[0].message;
  EXPECT_NE(progress.str().find("libcuda.so.1"), std::string::npos) << progress.str();
  EXPECT_EQ(verified_sets("lib", "tier-hopper"), 1u);
  EXPECT_EQ(live_jobs(), "");
}

TEST_F(SlurmSuite, AConstraintNoNodeOffersIsSaidInTierTerms) {
  const app::SlurmReport report = dispatch(app::SlurmWork::build, {"tier-next"}, {"lib"});
  ASSERT_EQ(report.jobs.size(), 1u);
  EXPECT_TRUE(report.jobs[0].id.empty());
  EXPECT_EQ(report.exit_code(), ExitCode::bad_input);
  EXPECT_NE(report.jobs[0].message.find("no node in partition hopper offers sm_100 for tier tier-next (sbatch: "
                                        "Batch job submission failed: Invalid feature specification)"),
            std::string::npos)
      << report.jobs[0].message;
  EXPECT_EQ(live_jobs(), "");
  EXPECT_EQ(verified_sets("lib", "tier-next"), 0u);
}

TEST_F(SlurmSuite, AFailingBuildGivesItsExitCodeAndItsOutput) {
  const app::SlurmReport report = dispatch(app::SlurmWork::build, {"tier-ampere"}, {"broken"});
  ASSERT_EQ(report.jobs.size(), 1u);
  const app::SlurmJob& job = report.jobs[0];
  EXPECT_EQ(job.state, "FAILED");
  EXPECT_EQ(report.exit_code(), ExitCode::check_failed) << job.message;
  EXPECT_NE(job.message.find("failed on a100node with exit code 1"), std::string::npos) << job.message;
  EXPECT_NE(job.message.find("the build breaks here"), std::string::npos) << job.message;
  EXPECT_EQ(verified_sets("broken", "tier-ampere"), 0u);
  EXPECT_EQ(live_jobs(), "");
}

TEST_F(SlurmSuite, ACancelStopsTheJobsAndAJobPastItsTimeLimitSaysSo) {
  // SIGTERM's flag once the job runs: scancel, the job ends CANCELLED.
  engine::CancelFlag cancel;
  WatchedOutput hook([&](const std::string& seen) {
    if (seen.find("sleeper/tier-hopper RUNNING") != std::string::npos) cancel.request();
  });
  std::ostream hooked(&hook);
  const auto start = std::chrono::steady_clock::now();
  const app::SlurmReport stopped = dispatch(app::SlurmWork::build, {"tier-hopper"}, {"sleeper"}, hooked, &cancel);
  ASSERT_EQ(stopped.jobs.size(), 1u);
  EXPECT_TRUE(stopped.cancelled);
  EXPECT_EQ(stopped.jobs[0].state, "CANCELLED");
  EXPECT_EQ(stopped.exit_code(), ExitCode::outside_failure);
  EXPECT_NE(stopped.jobs[0].message.find("was cancelled on h100node"), std::string::npos) << stopped.jobs[0].message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(120));
  EXPECT_EQ(live_jobs(), "");

  // --time=1 (the tier's slurm: time): Slurm ends it TIMEOUT a minute or so in.
  const app::SlurmReport late = dispatch(app::SlurmWork::build, {"tier-slow"}, {"sleeper"});
  ASSERT_EQ(late.jobs.size(), 1u);
  EXPECT_EQ(late.jobs[0].state, "TIMEOUT");
  EXPECT_EQ(late.exit_code(), ExitCode::outside_failure);
  EXPECT_NE(late.jobs[0].message.find("ran past its time limit of 00:01:00 on a100node (the tier's slurm: time)"),
            std::string::npos)
      << late.jobs[0].message;
  EXPECT_EQ(verified_sets("sleeper", "tier-slow"), 0u);
  EXPECT_EQ(live_jobs(), "");
}

// Issue 28: a build step set its job's name and comment to "... set=<an
// older set> JobState=COMPLETED ExitCode=0:0"; the submitter read those
// words from `scontrol show job -o`, reported COMPLETED, took the older
// set (built from other steps, another key) and exited 0 while the job ran
// on and failed. Now the state is squeue's, the set is taken only once the
// job completed, and only when its signed manifest was built for the key
// the job's build named.
TEST_F(SlurmSuite, AJobThatWritesItsOwnResultIsNotBelieved) {
  const std::string conf = (s_dir->path() / "slurm" / "slurm.conf").string();
  const auto forger = [&](const std::string& steps) {
    return "  - name: forger\n    framework: cmake\n    source: {path: " + std::string(ORC_SOURCE_DIR) +
           "/tests/integration/nested-project}\n    tiers: [tier-ampere]\n    env: {SLURM_CONF: \"" + conf +
           "\"}\n    build:\n" + steps + "    artifacts: [\"**/libx.so\"]\n";
  };
  const std::string cmake_steps =
      "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n      - cmake --build build\n";
  // An earlier set of the pair, from other steps: in the registry and here.
  write_config(forger(cmake_steps));
  const app::SlurmReport first = dispatch(app::SlurmWork::build, {"tier-ampere"}, {"forger"});
  ASSERT_EQ(first.exit_code(), ExitCode::ok) << first.jobs[0].message;
  const std::string older = first.jobs[0].set, older_key = first.jobs[0].key;
  ASSERT_EQ(verified_sets("forger", "tier-ampere"), 1u);

  // The step finds its job, writes the older set and key and Slurm's words
  // into the job's name and comment, lets the submitter poll a while, fails.
  const std::string forge =
      "      - sh -c 'id=$(squeue -h -n orc-build-forger-tier-ampere -o %i);"
      " scontrol update JobId=$id JobName=\"x JobState=COMPLETED ExitCode=0:0\" &&"
      " scontrol update JobId=$id Comment=\"orchestrate build recipe=forger tier=tier-ampere key=" +
      older_key + " set=" + older + " JobState=COMPLETED ExitCode=0:0\" && echo forged && sleep 4'\n";
  write_config(forger(forge + "      - sh -c 'exit 7'\n"));
  std::ostringstream progress;
  const app::SlurmReport forged = dispatch(app::SlurmWork::build, {"tier-ampere"}, {"forger"}, progress);
  ASSERT_EQ(forged.jobs.size(), 1u);
  const app::SlurmJob& job = forged.jobs[0];
  EXPECT_NE(progress.str().find("] forged"), std::string::npos) << progress.str();  // the words were written
  EXPECT_EQ(job.state, "FAILED");
  EXPECT_EQ(forged.exit_code(), ExitCode::check_failed) << job.message;
  EXPECT_NE(job.message.find("failed on a100node with exit code 1"), std::string::npos) << job.message;
  EXPECT_EQ(job.set, "");
  EXPECT_EQ(verified_sets("forger", "tier-ampere"), 1u);
  EXPECT_EQ(live_jobs(), "");

  // The same words, then a build that succeeds: its own comment replaces
  // them, and its own set, of its own key, is the one taken.
  write_config(forger(forge + cmake_steps));
  const app::SlurmReport real = dispatch(app::SlurmWork::build, {"tier-ampere"}, {"forger"});
  ASSERT_EQ(real.exit_code(), ExitCode::ok) << real.jobs[0].message;
  EXPECT_EQ(real.jobs[0].state, "COMPLETED");
  EXPECT_NE(real.jobs[0].set, older);
  EXPECT_NE(real.jobs[0].key, older_key);
  EXPECT_EQ(verified_sets("forger", "tier-ampere"), 2u);

  // A set named with a key it was not built for is refused, from the
  // registry before anything is stored, and from this store as well.
  for (const fs::path& store : {m_dir.path() / "fresh-store", m_store}) {
    try {
      app::pull(app::TransferRequest{.config = m_config,
                                     .store_root = store,
                                     .recipe = "forger",
                                     .tier = "tier-ampere",
                                     .digest = older,
                                     .key = real.jobs[0].key});
      ADD_FAILURE() << "pulled " << older << " for the key " << real.jobs[0].key;
    } catch (const util::Failure& failure) {
      EXPECT_EQ(failure.code(), ExitCode::check_failed);
      EXPECT_EQ(failure.diagnostics().front().message,
                "refusing " + older + ": it was built for cache key " + older_key.substr(0, 16) + "..., not " +
                    real.jobs[0].key.substr(0, 16) + "..., the key asked for (a set another build made)");
    }
  }
  auto fresh = cache::Store::open(m_dir.path() / "fresh-store");
  ASSERT_TRUE(fresh);
  auto none = fresh->index().list({.recipe = "forger", .tier = {}, .key = {}, .verified_only = false});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace orc::integration
