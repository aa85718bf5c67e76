// `orchestrate build` (app::build) through a real container engine: the
// cases shared by integration_build (dockerd, build_docker_test.cpp) and
// integration_build_podman (Podman's API service, engine_podman_test.cpp).
// The images are made by app::build_image from rootfs tars cached in
// fixtures/images of the build tree (as integration_images does); the
// example saxpy-cmake project is built in containers of them, its artifacts
// inspected and stored; a rerun is a hit that creates no container; a tier
// change rebuilds; a failing step and an empty glob fail and store nothing;
// the engine dying mid-build is exit 3 and stores nothing. The two-toolkit
// case (CUDA 11.8 for Pascal and Volta, the host's 13.0 for Blackwell) is
// its own ctest case, integration_build_cuda118.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <streambuf>
#include <thread>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/images/images.hpp"
#include "orchestrator/app/stamp/stamp.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "tests/integration/build_in_engine.hpp"
#include "tests/integration/engine_service.hpp"
#include "tests/integration/process.hpp"
#include "tests/integration/watched_output.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* k_label = "org.orchestrate.recipe=saxpy-cmake";

// Container-create events for our label since `since` (unix seconds): the
// containers are removed after each step, so the engine's event log is
// where a created one still shows.
int creates_once(std::time_t since) {
  const nlohmann::json filters{{"type", {"container"}}, {"event", {"create"}}, {"label", {k_label}}};
  const ProcessResult got =
      run_process({"curl", "-sfG", "--unix-socket", engine_service().socket.string(), "--data-urlencode",
                   "filters=" + filters.dump(), "--data-urlencode", "since=" + std::to_string(since),
                   "--data-urlencode", "until=" + std::to_string(std::time(nullptr) + 1), "http://localhost/events"});
  if (got.exit_code != 0) {
    ADD_FAILURE() << "reading the engine's events with curl failed (exit " << got.exit_code << "): " << got.output;
    return -1;
  }
  int count = 0;
  std::istringstream lines(got.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("\"create\"") != std::string::npos) ++count;
  return count;
}

// The same, read until it shows at least `at_least`, for up to 5 s: Podman
// writes its events to a file and may answer a moment before the last lines
// are in it (a CI run once read 0 creates right after a build). Asked for at
// least 0, it waits 2 s first, so a create that a late read would show is
// seen too.
int creates_since(std::time_t since, int at_least) {
  if (at_least == 0) std::this_thread::sleep_for(std::chrono::seconds(2));
  int count = creates_once(since);
  for (int i = 0; i < 25 && count >= 0 && count < at_least; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    count = creates_once(since);
  }
  return count;
}

TEST_F(BuildInEngine, BuildsCachesRebuildsAndFailsCleanly) {
  ensure_image("host-bookworm");

  // Blackwell, datacenter and consumer: SASS for each, PTX of the newest.
  write_config("\"B200\", \"RTX 5090\"");
  const std::time_t first_start = std::time(nullptr);
  const app::BuildResult first = build("saxpy-cmake");
  ASSERT_EQ(first.status, app::BuildStatus::built) << errors(first);
  EXPECT_EQ(first.exit_code, util::ExitCode::ok);
  ASSERT_EQ(first.artifacts.size(), 1u);
  EXPECT_EQ(first.artifacts[0].sass.names(), (std::vector<std::string>{"sm_100", "sm_120"}));
  EXPECT_EQ(first.artifacts[0].ptx.names(), (std::vector<std::string>{"compute_120"}));
  EXPECT_TRUE(fs::exists(first.artifacts[0].path)) << first.artifacts[0].path;
  EXPECT_TRUE(first.manifest.has_value());
  // The event query sees what a build creates (so its zero below means something).
  EXPECT_GE(creates_since(first_start, 2), 2) << "each build step is a container";

  // Nothing changed: a hit, and not one container.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // events are dated in whole seconds
  const std::time_t second_start = std::time(nullptr);
  const app::BuildResult second = build("saxpy-cmake");
  EXPECT_EQ(second.status, app::BuildStatus::cached) << errors(second);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.manifest, first.manifest);
  EXPECT_EQ(creates_since(second_start, 0), 0) << "a cache hit created a container";

  // `image:` and `stamp: true` (issue 16): the same set, still a hit, made
  // into the image orc-test/saxpy:tier-x with the constraints of its code
  // (sm_100 and sm_120 SASS, compute_120 PTX, the CUDA 13 runtime linked
  // statically), which inspect docker:// reads back as native on both GPUs.
  write_config("\"B200\", \"RTX 5090\"", "    image: orc-test/saxpy\n    stamp: true\n");
  const app::BuildResult imaged = build("saxpy-cmake");
  EXPECT_EQ(imaged.status, app::BuildStatus::cached) << errors(imaged);
  EXPECT_EQ(imaged.exit_code, util::ExitCode::ok) << errors(imaged);
  EXPECT_TRUE(imaged.image_made.starts_with("orc-test/saxpy:tier-x (sha256:")) << imaged.image_made;
  EXPECT_EQ(imaged.image_env, (std::vector<std::string>{"NVIDIA_REQUIRE_CUDA=cuda>=13.0",
                                                        "NVIDIA_REQUIRE_ARCH=arch>=10.0,arch<11.0 arch>=12.0"}));
  const auto env = run_process({"curl", "-sf", "--unix-socket", engine_service().socket.string(),
                                "http://localhost/images/orc-test/saxpy:tier-x/json"});
  ASSERT_EQ(env.exit_code, 0) << env.output;
  // Podman's JSON writes '<' and '>' as \u003c and \u003e: read it as JSON.
  const auto image = nlohmann::json::parse(env.output, nullptr, false);
  ASSERT_FALSE(image.is_discarded()) << env.output;
  const auto vars = image["Config"]["Env"].get<std::vector<std::string>>();
  EXPECT_NE(std::ranges::find(vars, "NVIDIA_REQUIRE_ARCH=arch>=10.0,arch<11.0 arch>=12.0"), vars.end()) << env.output;
  EXPECT_TRUE(image["Config"]["Labels"].contains("org.orchestrate.set")) << env.output;

  // `stamp --recipe` (issue 29): the recipe's image of its current set,
  // stamped through the engine (Docker's export and load; Podman's API is
  // not what stamp is tried on here).
  if (m_kind == engine::EngineKind::docker) {
    const app::StampReport stamped = app::stamp(
        {.recipe = "saxpy-cmake", .tier = "tier-x", .config = m_config, .tag = "stamped", .store_root = m_store});
    EXPECT_TRUE(stamped.stamped_ok);
    EXPECT_EQ(stamped.stamped, "orc-test/saxpy:stamped");
    ASSERT_TRUE(stamped.from_recipe);
    EXPECT_EQ(stamped.from_recipe->set, *imaged.manifest);
    EXPECT_FALSE(stamped.from_recipe->newer);
  }

  // Another tier: another key, a rebuild for Hopper.
  write_config("\"H100\"");
  const app::BuildResult hopper = build("saxpy-cmake");
  ASSERT_EQ(hopper.status, app::BuildStatus::built) << errors(hopper);
  EXPECT_NE(hopper.key, first.key);
  ASSERT_EQ(hopper.artifacts.size(), 1u);
  EXPECT_EQ(hopper.artifacts[0].sass.names(), (std::vector<std::string>{"sm_90"}));
  EXPECT_EQ(hopper.artifacts[0].ptx.names(), (std::vector<std::string>{"compute_90"}));

  // The Hopper set is now current for tier-x, and the image still holds the
  // Blackwell one: stamp --recipe refuses it, naming the build that remakes it.
  if (m_kind == engine::EngineKind::docker) {
    write_config("\"H100\"", "    image: orc-test/saxpy\n");
    try {
      (void)app::stamp({.recipe = "saxpy-cmake", .tier = "tier-x", .config = m_config, .store_root = m_store});
      ADD_FAILURE() << "an image of a set that is not current was stamped";
    } catch (const util::Failure& e) {
      EXPECT_EQ(e.code(), util::ExitCode::bad_input);
      const std::string what = e.what();
      EXPECT_NE(what.find("holds the set " + imaged.manifest->to_string() + ", not the current set"), std::string::npos)
          << what;
      EXPECT_NE(what.find("orchestrate build tier-x --recipe saxpy-cmake"), std::string::npos) << what;
    }
  }

  // A step that exits non-zero: failed, exit 1, nothing stored.
  const app::BuildResult failed = build("fails");
  EXPECT_EQ(failed.status, app::BuildStatus::failed);
  EXPECT_EQ(failed.exit_code, util::ExitCode::check_failed) << errors(failed);
  EXPECT_NE(errors(failed).find("exited with 1"), std::string::npos) << errors(failed);
  EXPECT_FALSE(failed.manifest.has_value());
  EXPECT_EQ(sets_for(failed.key), 0u);

  // A glob that matches nothing: a failure that names the glob, nothing stored.
  const app::BuildResult empty = build("no-match");
  EXPECT_EQ(empty.status, app::BuildStatus::failed);
  EXPECT_EQ(empty.exit_code, util::ExitCode::check_failed) << errors(empty);
  EXPECT_NE(errors(empty).find("build/nothing-*.so"), std::string::npos) << errors(empty);
  EXPECT_FALSE(empty.manifest.has_value());
  EXPECT_EQ(sets_for(empty.key), 0u);
}

// Two tiers that need two toolkits, built in parallel in one run: Pascal and
// Volta are gone from CUDA 13, so they get Debian's 11.8 image; Blackwell
// needs 12.8 or later, so it gets the host's 13.0 mounted. Each artifact
// holds exactly the planned SASS and PTX.
TEST_F(BuildInEngine, TwoToolkitsCuda118ForPascalVoltaAndTheHosts130ForBlackwell) {
  ensure_image("11.8-bookworm");
  ensure_image("host-bookworm");
  const std::string cmake_steps =
      "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n"
      "      - cmake --build build --parallel\n";
  std::ofstream(m_config) << "toolkits: [\"11.8\", \"13.0\"]\n"
                             "tiers:\n"
                             "  tier-pv: {gpus: [\"Tesla P100\", \"V100\"]}\n"
                             "  tier-bw: {gpus: [\"B200\", \"RTX 5090\"], ptx: none}\n"
                             "recipes:\n" +
                                 saxpy_recipe("saxpy-cmake", "tier-pv, tier-bw", cmake_steps, "build/saxpy");
  const app::BuildReport report = build_tiers({"tier-pv", "tier-bw"}, {"saxpy-cmake"});
  ASSERT_EQ(report.builds.size(), 2u);
  EXPECT_EQ(report.exit_code(), util::ExitCode::ok);
  for (const auto& b : report.builds) {
    ASSERT_EQ(b.status, app::BuildStatus::built) << b.tier << ": " << errors(b);
    ASSERT_EQ(b.artifacts.size(), 1u) << b.tier;
    auto store = cache::Store::open(m_store);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    ASSERT_TRUE(b.manifest.has_value()) << b.recipe;
    const auto manifest = store->read_blob(*b.manifest);
    ASSERT_TRUE(manifest.has_value()) << b.manifest->to_string();
    const auto j = nlohmann::json::parse(*manifest);
    if (b.tier == "tier-pv") {
      EXPECT_EQ(b.artifacts[0].sass.names(), (std::vector<std::string>{"sm_60", "sm_70"}));
      EXPECT_EQ(b.artifacts[0].ptx.names(), (std::vector<std::string>{"compute_70"}));
      EXPECT_EQ(j["toolkit"], "11.8") << j.dump(2);
      EXPECT_EQ(j["image"]["reference"], "orchestrate/cuda:11.8-bookworm") << j.dump(2);
    } else {
      EXPECT_EQ(b.artifacts[0].sass.names(), (std::vector<std::string>{"sm_100", "sm_120"}));
      EXPECT_EQ(b.artifacts[0].ptx.names(), (std::vector<std::string>{}));
      EXPECT_EQ(j["toolkit"], "13.0") << j.dump(2);
      EXPECT_EQ(j["image"]["reference"], "orchestrate/cuda:host-bookworm") << j.dump(2);
    }
  }
}

// Last in the file (the engine does not come back): the engine is killed
// while a build step runs. The build exits 3 naming the engine, and stores
// nothing.
// Issue 27 in a container: the nvcc front is staged into the build tree and
// mounted at /orc/front, and a project that pins its archs after project()
// stops at CMakeLists.txt:7 under verify and builds exactly the plan under
// enforce, with the image's own toolkit layout behind the front.
TEST_F(BuildInEngine, PinnedProjectStopsUnderVerifyAndBuildsThePlanUnderEnforce) {
  ensure_image("host-bookworm");
  const std::string src = std::string(ORC_SOURCE_DIR) + "/tests/integration/front/pinned-cmake";
  std::ofstream(m_config) << "toolkits: [\"13.0\"]\ntiers:\n  tier-x:\n    gpus: [\"A100\", \"H100\"]\nrecipes:\n"
                          << "  - {name: pinned, framework: cmake, source: {path: " << src
                          << "}, tiers: [tier-x], artifacts: [pinned]}\n"
                          << "  - {name: pinned-enforce, framework: cmake, nvcc: enforce, source: {path: " << src
                          << "}, tiers: [tier-x], artifacts: [pinned]}\n";
  const app::BuildResult refused = build("pinned");
  ASSERT_EQ(refused.status, app::BuildStatus::failed);
  EXPECT_EQ(refused.exit_code, util::ExitCode::check_failed);
  ASSERT_FALSE(refused.errors.empty());
  EXPECT_NE(refused.errors.front().find("CMakeLists.txt:7: nvcc was asked to compile pinned.cu for sm_75"),
            std::string::npos)
      << errors(refused);
  EXPECT_FALSE(refused.manifest.has_value());
  const app::BuildResult enforced = build("pinned-enforce");
  ASSERT_EQ(enforced.status, app::BuildStatus::built) << errors(enforced);
  ASSERT_EQ(enforced.artifacts.size(), 1u);
  EXPECT_EQ(enforced.artifacts[0].sass.names(), (std::vector<std::string>{"sm_80", "sm_90"}));
  EXPECT_EQ(enforced.artifacts[0].ptx.names(), (std::vector<std::string>{"compute_90"}));
  ASSERT_TRUE(enforced.nvcc.has_value());
  EXPECT_TRUE(std::ranges::any_of(enforced.nvcc->calls,
                                  [](const front::CallRecord& c) { return c.outcome == front::Outcome::enforced; }));
}

TEST_F(BuildInEngine, ZzEngineDyingMidBuildExitsThreeAndStoresNothing) {
  ensure_image("host-bookworm");
  write_config("\"H100\"");
  const pid_t pid = engine_service().pid;
  ASSERT_GT(pid, 0);
  bool killed = false;
  WatchedOutput watched([&](const std::string& seen) {
    if (!killed && seen.find("] started\n") != std::string::npos) {
      killed = true;
      ::kill(pid, SIGKILL);
    }
  });
  std::ostream progress(&watched);
  const app::BuildResult dead = build("slow", progress);
  ASSERT_TRUE(killed) << "the step never printed 'started'";
  EXPECT_EQ(dead.status, app::BuildStatus::failed);
  EXPECT_EQ(dead.exit_code, util::ExitCode::outside_failure) << errors(dead);
  EXPECT_NE(errors(dead).find("engine"), std::string::npos) << errors(dead);
  EXPECT_FALSE(dead.manifest.has_value());
  EXPECT_EQ(sets_for(dead.key), 0u);
  std::cout << "[  engine  ] " << errors(dead);
}

}  // namespace
}  // namespace orc::integration
