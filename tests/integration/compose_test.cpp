// docker/compose.yaml brought up for real (issue 14) with Debian's
// docker-compose on a dockerd this binary starts (build_docker_test.cpp's
// environment). The images are made offline: a debootstrap root file system
// with the run-time libraries and Debian's docker-registry
// (scripts/make-base-image.sh, imported through the engine API), then
// docker/Dockerfile.prebuilt (this build's orchestrate) and
// docker/Dockerfile.registry built on it through the API. The stack runs the
// registry and the watcher service with the host network and the engine
// socket; one watch cycle polls the stack's own registry (an nvidia/cuda-
// scheme tag pushed there first) and says so in its status line; a stop
// sends SIGTERM and the watcher says it stopped (exit 143); `down -v`
// removes it all.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/registry/client.hpp"
#include "tests/integration/engine_service.hpp"
#include "tests/integration/process.hpp"
#include "tests/integration/test_image.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* k_runtime_packages = "libcurl4,libarchive13,libssl3,libsqlite3-0,ca-certificates,docker-registry";

struct Quiet final : engine::LogSink {
  void on_output(engine::OutputStream, std::string_view) override {}
};

// A free TCP port of 127.0.0.1 (bound, read, released).
int free_port() {
  const auto got = run_process({"python3", "-c",
                                "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); "
                                "print(s.getsockname()[1])"});
  return std::atoi(got.output.c_str());
}

class ComposeStack : public ::testing::Test {
 protected:
  void SetUp() override {
    const EngineService& s = engine_service();
    if (!s.skip_reason.empty()) GTEST_SKIP() << s.skip_reason;
    ASSERT_TRUE(s.setup_error.empty()) << s.setup_error;
    if (run_process({"docker-compose", "version"}).exit_code != 0)
      GTEST_SKIP() << "Debian's docker-compose is not installed (apt-get install docker-compose)";
    if (run_process({"python3", "--version"}).exit_code != 0) GTEST_SKIP() << "no python3 here";
  }

  // docker-compose with the stack's settings in its environment.
  ProcessResult compose(std::vector<std::string> args) {
    const std::vector<std::string> env = {"DOCKER_HOST=unix://" + engine_service().socket.string(),
                                          "ORCHESTRATE_IMAGE=orchestrate:compose-test",
                                          "REGISTRY_IMAGE=orchestrate/registry:compose-test",
                                          "REGISTRY_PORT=" + std::to_string(m_port),
                                          "ORCHESTRATE_HOME=" + m_home.string(),
                                          "DOCKER_SOCKET=" + engine_service().socket.string(),
                                          "WATCH_INTERVAL=1h"};
    std::vector<std::string> argv = {"env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"docker-compose", "-f", std::string(ORC_SOURCE_DIR) + "/docker/compose.yaml", "-p",
                             "orctest", "--ansi", "never"});
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv);
  }

  void build(engine::DockerEngine& engine, const fs::path& context, const std::string& tag,
             const std::string& dockerfile, const std::string& base) {
    const auto start = Clock::now();
    auto built = engine.build_image(context, tag, {.dockerfile = dockerfile, .build_args = {{"BASE", base}}}, m_quiet);
    ASSERT_TRUE(built) << built.error().message;
    say("built " + tag + " in " + seconds_since(start) + " s");
  }

  // One nvidia/cuda-scheme tag in the stack's registry.
  void push_tag(const std::string& tag) {
    registry::Client c({.url = "http://127.0.0.1:" + std::to_string(m_port) + "/nvidia/cuda"},
                       registry::make_curl_transport());
    const auto pushed = push_test_image(c, tag, "layer of " + tag);
    ASSERT_TRUE(pushed) << pushed.error();
  }

  // `docker-compose logs watcher` once it holds `text`, or after 90 s.
  std::string watcher_logs_with(const std::string& text) {
    std::string logs;
    for (int i = 0; i < 180; ++i) {
      logs = compose({"logs", "--no-color", "watcher"}).output;
      if (logs.find(text) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return logs;
  }

  TempDir m_dir{"orc-compose"};
  fs::path m_home = m_dir.path() / "home";
  int m_port = 0;
  Quiet m_quiet;
};

TEST_F(ComposeStack, UpRunsAWatchCycleAgainstItsRegistryAndStopsOnSigterm) {
  auto start = Clock::now();
  const auto made = run_process(
      {script_path("make-base-image.sh"), ORC_FIXTURES_DIR, "bookworm-orchestrate-runtime", k_runtime_packages});
  if (made.exit_code != 0) GTEST_SKIP() << "no runtime root file system (debootstrap failed): " << made.output;
  const fs::path tar = last_line(made.output);
  say("runtime rootfs " + tar.string() + " ready after " + seconds_since(start) + " s");
  auto engine = engine::DockerEngine::connect(engine_service().socket);
  ASSERT_TRUE(engine) << engine.error().message;
  start = Clock::now();
  auto runtime = engine->import_image(tar, "orchestrate/runtime", "compose-test");
  ASSERT_TRUE(runtime) << runtime.error().message;
  say("imported orchestrate/runtime:compose-test in " + seconds_since(start) + " s");

  // The two images of the stack, from the repository's own Dockerfiles.
  const fs::path watcher_context = m_dir.path() / "watcher-context";
  fs::create_directories(watcher_context);
  fs::copy_file(std::string(ORC_SOURCE_DIR) + "/docker/Dockerfile.prebuilt", watcher_context / "Dockerfile.prebuilt");
  fs::copy_file(ORC_BINARY, watcher_context / "orchestrate");
  build(*engine, watcher_context, "orchestrate:compose-test", "Dockerfile.prebuilt",
        "orchestrate/runtime:compose-test");
  build(*engine, std::string(ORC_SOURCE_DIR) + "/docker", "orchestrate/registry:compose-test", "Dockerfile.registry",
        "orchestrate/runtime:compose-test");

  m_port = free_port();
  ASSERT_GT(m_port, 0);
  fs::create_directories(m_home);
  std::ofstream(m_home / "orchestrate.yaml")
      << "toolkits: [\"13.0\"]\nremote: http://127.0.0.1:" << m_port
      << "/team/artifacts\ntiers:\n  h:\n    gpus: [H100]\nwatch:\n  images:\n    - {url: \"http://127.0.0.1:" << m_port
      << "/nvidia/cuda\", os: ubuntu24.04}\nrecipes:\n  - name: k\n    framework: cmake\n    source: {path: src}\n"
         "    tiers: [h]\n";

  // The registry first, a tag in it, then the watcher: its first cycle polls it.
  auto up = compose({"up", "-d", "--no-build", "registry"});
  ASSERT_EQ(up.exit_code, 0) << up.output;
  bool answered = false;
  for (int i = 0; i < 100 && !answered; ++i) {
    answered = run_process({"curl", "-sf", "http://127.0.0.1:" + std::to_string(m_port) + "/v2/"}).exit_code == 0;
    if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(answered) << compose({"logs", "--no-color", "registry"}).output;
  push_tag("13.0.2-devel-ubuntu24.04");
  up = compose({"up", "-d", "--no-build", "watcher"});
  ASSERT_EQ(up.exit_code, 0) << up.output;

  const std::string logs = watcher_logs_with(" cycle 1: ");
  std::cout << logs;
  EXPECT_NE(logs.find(" cycle 1: feeds 1/1 ok, 0 stale, 0 rebuilt, 0 failed, 0 locked; next in 1h"), std::string::npos)
      << logs;

  // `stop` sends SIGTERM; the service says it stopped and exits 143 (128 +
  // SIGTERM, what docker shows for a stopped container).
  const auto stopped = compose({"stop", "watcher"});
  EXPECT_EQ(stopped.exit_code, 0) << stopped.output;
  const std::string after = watcher_logs_with(" watcher stopped");
  EXPECT_NE(after.find(" watcher stopped by SIGTERM"), std::string::npos) << after;
  const auto state = run_process({"docker", "-H", "unix://" + engine_service().socket.string(), "inspect", "-f",
                                  "{{.State.ExitCode}}", "orctest_watcher_1"});
  EXPECT_EQ(state.output, "143\n") << state.output;

  const auto down = compose({"down", "-v"});
  EXPECT_EQ(down.exit_code, 0) << down.output;
  const auto left = run_process(
      {"docker", "-H", "unix://" + engine_service().socket.string(), "ps", "-aq", "--filter", "name=orctest"});
  EXPECT_EQ(left.output, "") << "containers left behind";
}

}  // namespace
}  // namespace orc::integration
