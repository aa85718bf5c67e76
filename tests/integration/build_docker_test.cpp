// `orchestrate build` (app::build) through a real dockerd: the host-bookworm
// image made by app::build_image (rootfs tar cached in fixtures/images of the
// build tree, as integration_images does), then the example saxpy-cmake
// recipe built in containers of it with the host's CUDA 13.0 mounted, its
// artifact inspected and stored; a rerun is a hit that creates no
// container; a tier change rebuilds; a failing step and an empty glob fail
// and store nothing. One ctest case, so dockerd starts once.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "orchestrator/app/build.hpp"
#include "orchestrator/app/images.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "tests/integration/engine_service.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* k_label = "org.orchestrate.recipe=saxpy-cmake";

class DockerdEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    EngineService& s = engine_service();
    s.name = "dockerd";
    if (::geteuid() != 0) return skip("dockerd, debootstrap and chroot need root (run the suite as root, as CI does)");
    if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) return skip("no CUDA toolkit at /usr/local/cuda here");
    if (run_process({"sh", "-c", "command -v debootstrap"}).exit_code != 0)
      return skip("debootstrap is not installed (apt-get install debootstrap)");
    char dir[] = "/tmp/orc-build-XXXXXX";
    if (!::mkdtemp(dir)) return skip("cannot make a temporary directory");
    s.dir = dir;
    fs::create_directories(s.dir / "engine");
    // Removing the image's unpacked layers from this disk takes ~45 s at
    // teardown; from a tmpfs, none.
    mount_tmpfs(s.dir / "engine");
    const auto start = Clock::now();
    const ProcessResult started = run_process({script_path("start-dockerd.sh"), (s.dir / "engine").string()});
    if (started.exit_code != 0) return skip("dockerd could not start here: " + started.output);
    s.socket = last_line(started.output);
    std::ifstream(s.dir / "engine" / "docker.pid") >> s.pid;
    say("dockerd answered on " + s.socket.string() + " after " + seconds_since(start) + " s");
    // The image state file and the build store belong to this run.
    ::setenv("ORCHESTRATE_CACHE_DIR", (s.dir / "cache").c_str(), 1);
    ::setenv("DOCKER_HOST", ("unix://" + s.socket.string()).c_str(), 1);
  }

  void TearDown() override {
    EngineService& s = engine_service();
    if (s.dir.empty()) return;
    const auto start = Clock::now();
    const ProcessResult stopped = run_process({script_path("stop-dockerd.sh"), (s.dir / "engine").string()});
    if (stopped.exit_code != 0 || !stopped.output.empty()) say("stop-dockerd.sh: " + stopped.output);
    unmount_and_remove(s.dir / "engine");
    std::error_code ec;
    fs::remove_all(s.dir, ec);
    say("dockerd stopped and its files removed in " + seconds_since(start) + " s");
  }

 private:
  static void skip(const std::string& reason) {
    engine_service().skip_reason = reason;
    say("skipping every case: " + reason);
  }
};

[[maybe_unused]] ::testing::Environment* const g_environment =
    ::testing::AddGlobalTestEnvironment(new DockerdEnvironment);

// Container-create events for our label since `since` (unix seconds): the
// containers are removed after each step, so the engine's event log is
// where a created one still shows.
int creates_since(std::time_t since) {
  const nlohmann::json filters{{"type", {"container"}}, {"event", {"create"}}, {"label", {k_label}}};
  const ProcessResult got =
      run_process({"curl", "-sfG", "--unix-socket", engine_service().socket.string(), "--data-urlencode",
                   "filters=" + filters.dump(), "--data-urlencode", "since=" + std::to_string(since), "--data-urlencode",
                   "until=" + std::to_string(std::time(nullptr) + 1), "http://localhost/events"});
  if (got.exit_code != 0) return -1;
  int count = 0;
  std::istringstream lines(got.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("\"create\"") != std::string::npos) ++count;
  return count;
}

std::string config_text(const std::string& gpus) {
  const std::string src = std::string(ORC_SOURCE_DIR) + "/recipes/examples/saxpy-cmake";
  return "toolkits: [\"13.0\"]\n"
         "tiers:\n"
         "  tier-x:\n"
         "    gpus: [" + gpus + "]\n"
         "recipes:\n"
         "  - name: saxpy-cmake\n"
         "    framework: cmake\n"
         "    source: {path: " + src + "}\n"
         "    tiers: [tier-x]\n"
         "    build:\n"
         "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n"
         "      - cmake --build build --parallel\n"
         "    artifacts: [\"build/saxpy\"]\n"
         "  - name: fails\n"
         "    framework: cmake\n"
         "    source: {path: " + src + "}\n"
         "    tiers: [tier-x]\n"
         "    build:\n"
         "      - [\"false\"]\n"
         "    artifacts: [\"build/saxpy\"]\n"
         "  - name: no-match\n"
         "    framework: cmake\n"
         "    source: {path: " + src + "}\n"
         "    tiers: [tier-x]\n"
         "    build:\n"
         "      - [\"true\"]\n"
         "    artifacts: [\"build/nothing-*.so\"]\n";
}

std::string errors(const app::BuildResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e + "\n";
  return out;
}

class BuildDocker : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!engine_service().skip_reason.empty()) GTEST_SKIP() << engine_service().skip_reason;
    m_config = engine_service().dir / "orchestrate.yaml";
    m_store = engine_service().dir / "store";
  }

  void write_config(const std::string& gpus) { std::ofstream(m_config) << config_text(gpus); }

  app::BuildResult build(const std::string& recipe) {
    const auto start = Clock::now();
    const app::BuildReport report =
        app::build(app::BuildRequest{.config = m_config, .tiers = {"tier-x"}, .recipes = {recipe},
                                     .engine = engine::EngineKind::docker, .jobs = 2, .explain = false,
                                     .store_root = m_store, .terminal = false},
                   std::cout);
    EXPECT_EQ(report.builds.size(), 1u);
    if (report.builds.empty()) return {};
    say(recipe + ": " + app::render_build_text(report, false) + "  in " + seconds_since(start) + " s");
    return report.builds.front();
  }

  fs::path m_config;
  fs::path m_store;
};

TEST_F(BuildDocker, BuildsCachesRebuildsAndFailsCleanly) {
  const auto image_start = Clock::now();
  const app::ImageBuildResult image = app::build_image({.name = "host-bookworm",
                                                        .engine_socket = engine_service().socket,
                                                        .cache_dir = fs::path(ORC_FIXTURES_DIR) / "images",
                                                        .images_dir = fs::path(ORC_SOURCE_DIR) / "images"},
                                                       std::cout);
  say("host-bookworm ready in " + seconds_since(image_start) + " s (rootfs tar " +
      (image.rootfs_cached ? "cached" : "made") + ")");
  ASSERT_TRUE(image.record.id.starts_with("sha256:")) << image.record.id;

  // Blackwell, datacenter and consumer: SASS for each, PTX of the newest.
  write_config("\"B200\", \"RTX 5090\"");
  const std::time_t first_start = std::time(nullptr);
  const app::BuildResult first = build("saxpy-cmake");
  ASSERT_EQ(first.status, app::BuildStatus::built) << errors(first);
  EXPECT_EQ(first.exit_code, 0);
  ASSERT_EQ(first.artifacts.size(), 1u);
  EXPECT_EQ(first.artifacts[0].sass, (std::vector<std::string>{"sm_100", "sm_120"}));
  EXPECT_EQ(first.artifacts[0].ptx, (std::vector<std::string>{"compute_120"}));
  EXPECT_TRUE(fs::exists(first.artifacts[0].path)) << first.artifacts[0].path;
  EXPECT_FALSE(first.manifest.empty());
  // The event query sees what a build creates (so its zero below means something).
  EXPECT_GE(creates_since(first_start), 2) << "each build step is a container";

  // Nothing changed: a hit, and not one container.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // events are dated in whole seconds
  const std::time_t second_start = std::time(nullptr);
  const app::BuildResult second = build("saxpy-cmake");
  EXPECT_EQ(second.status, app::BuildStatus::cached) << errors(second);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.manifest, first.manifest);
  EXPECT_EQ(creates_since(second_start), 0) << "a cache hit created a container";

  // Another tier: another key, a rebuild for Hopper.
  write_config("\"H100\"");
  const app::BuildResult hopper = build("saxpy-cmake");
  ASSERT_EQ(hopper.status, app::BuildStatus::built) << errors(hopper);
  EXPECT_NE(hopper.key, first.key);
  ASSERT_EQ(hopper.artifacts.size(), 1u);
  EXPECT_EQ(hopper.artifacts[0].sass, (std::vector<std::string>{"sm_90"}));
  EXPECT_EQ(hopper.artifacts[0].ptx, (std::vector<std::string>{"compute_90"}));

  // A step that exits non-zero: failed, exit 1, nothing stored.
  const app::Store store(m_store);
  const app::BuildResult failed = build("fails");
  EXPECT_EQ(failed.status, app::BuildStatus::failed);
  EXPECT_EQ(failed.exit_code, 1) << errors(failed);
  EXPECT_NE(errors(failed).find("exited with 1"), std::string::npos) << errors(failed);
  EXPECT_TRUE(failed.manifest.empty());
  EXPECT_FALSE(store.lookup(failed.key));

  // A glob that matches nothing: a failure that names the glob, nothing stored.
  const app::BuildResult empty = build("no-match");
  EXPECT_EQ(empty.status, app::BuildStatus::failed);
  EXPECT_EQ(empty.exit_code, 1) << errors(empty);
  EXPECT_NE(errors(empty).find("build/nothing-*.so"), std::string::npos) << errors(empty);
  EXPECT_TRUE(empty.manifest.empty());
  EXPECT_FALSE(store.lookup(empty.key));
}

}  // namespace
}  // namespace orc::integration
