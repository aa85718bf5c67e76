// `orchestrate build` (app::build) through a real dockerd that this binary
// starts (scripts/start-dockerd.sh) and stops; the cases are build_suite.cpp's.
// One ctest case per filter, so dockerd starts once for it.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "tests/integration/engine_service.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class DockerdEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    EngineService& s = engine_service();
    s.name = "dockerd";
    if (::geteuid() != 0) return skip("dockerd, debootstrap and chroot need root (run the suite as root, as CI does)");
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

}  // namespace
}  // namespace orc::integration
