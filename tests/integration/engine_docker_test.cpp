// The engine client against a real dockerd (Debian's docker.io), started by
// scripts/start-dockerd.sh in a temporary directory for this run and stopped
// by scripts/stop-dockerd.sh. The base image is a debootstrap rootfs
// imported through DockerEngine::import_image, not the docker CLI. The
// cases are engine_suite.cpp's, shared with the Podman suite.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "tests/integration/engine_service.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;

class DockerEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    EngineService& s = engine_service();
    s.name = "dockerd";
    if (::geteuid() != 0) {
      s.skip_reason = "dockerd needs root (run the suite as root, as CI does)";
      say("skipping every case: " + s.skip_reason);
      return;
    }
    char dir[] = "/tmp/orc-dockerd-XXXXXX";
    if (!::mkdtemp(dir)) {
      s.skip_reason = "cannot make a temporary directory";
      return;
    }
    s.dir = dir;
    mount_tmpfs(s.dir);

    const auto start = std::chrono::steady_clock::now();
    const ProcessResult started = run_process({script_path("start-dockerd.sh"), s.dir.string()});
    if (started.exit_code != 0) {
      s.skip_reason = "dockerd could not start here: " + started.output;
      say("skipping every case: " + s.skip_reason);
      return;
    }
    s.socket = last_line(started.output);
    std::ifstream(s.dir / "docker.pid") >> s.pid;
    say("dockerd answered /_ping on " + s.socket.string() + " after " + seconds_since(start) + " s");
    import_base_image(s);
  }

  void TearDown() override {
    EngineService& s = engine_service();
    if (s.dir.empty()) return;
    const auto start = std::chrono::steady_clock::now();
    const ProcessResult stopped = run_process({script_path("stop-dockerd.sh"), s.dir.string()});
    if (stopped.exit_code != 0 || !stopped.output.empty()) say("stop-dockerd.sh: " + stopped.output);
    say("dockerd stopped and cleaned up in " + seconds_since(start) + " s");
    unmount_and_remove(s.dir);
  }
};

[[maybe_unused]] ::testing::Environment* const g_environment =
    ::testing::AddGlobalTestEnvironment(new DockerEnvironment);

}  // namespace
}  // namespace orc::integration
