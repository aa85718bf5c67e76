// The same cases (engine_suite.cpp) against Podman's Docker-compatible API:
// `podman system service` on a unix socket, with everything it writes in a
// temporary directory. Podman's defaults do not run here (crun refuses the
// hybrid cgroups, and its default nofile exceeds the host's hard limit
// without CAP_SYS_RESOURCE), so containers.conf picks runc and explicit
// ulimits.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>

#include <fstream>
#include <sstream>
#include <thread>

#include "orchestrator/engine/docker.hpp"
#include "orchestrator/util/process.hpp"
#include "tests/integration/engine_service.hpp"
#include "tests/integration/process.hpp"


namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

void write_configs(const fs::path& dir) {
  std::ofstream(dir / "containers.conf") << "[containers]\n"
                                            "default_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n"
                                            "netns = \"none\"\n"
                                            "[engine]\n"
                                            "runtime = \"runc\"\n"
                                            "cgroup_manager = \"cgroupfs\"\n"
                                            "events_logger = \"file\"\n"
                                            "[engine.runtimes]\n"
                                            "runc = [\"/usr/sbin/runc\"]\n";
  std::ofstream(dir / "storage.conf") << "[storage]\n"
                                         "driver = \"overlay\"\n"
                                         "runroot = \""
                                      << (dir / "runroot").string()
                                      << "\"\n"
                                         "graphroot = \""
                                      << (dir / "root").string() << "\"\n";
}

bool answers(const fs::path& socket) {
  auto response = engine::make_unix_socket_transport(socket)->send(net::Request{.url = "/_ping", .timeout = 2s});
  return response && response->status == 200;
}

// Unmounts what the service left under `dir` (its overlay mounts), deepest first.
void unmount_under(const fs::path& dir) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::vector<std::string> points;
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (point.starts_with(dir.string() + "/")) points.push_back(point);
  }
  std::sort(points.rbegin(), points.rend());
  for (const auto& point : points) ::umount2(point.c_str(), MNT_DETACH);
}

class PodmanEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    EngineService& s = engine_service();
    s.name = "podman";
    if (::geteuid() != 0) {
      s.skip_reason = "the podman service runs as root here (run the suite as root, as CI does)";
      say("skipping every case: " + s.skip_reason);
      return;
    }
    if (run_process({"podman", "--version"}).exit_code != 0) {
      s.skip_reason = "podman is not installed (apt-get install podman runc)";
      say("skipping every case: " + s.skip_reason);
      return;
    }
    char dir[] = "/tmp/orc-podman-XXXXXX";
    if (!::mkdtemp(dir)) {
      s.skip_reason = "cannot make a temporary directory";
      return;
    }
    s.dir = dir;
    mount_tmpfs(s.dir);
    write_configs(s.dir);
    // Read by the service and by the podman CLI that cleans up after it.
    ::setenv("CONTAINERS_CONF", (s.dir / "containers.conf").c_str(), 1);
    ::setenv("CONTAINERS_STORAGE_CONF", (s.dir / "storage.conf").c_str(), 1);
    s.socket = s.dir / "podman.sock";

    const auto start = std::chrono::steady_clock::now();
    const std::string log = (s.dir / "service.log").string();
    const std::string address = "unix://" + s.socket.string();
    const auto started = util::start_process({.argv = {"podman", "system", "service", "--time=0", address},
                                              .output = util::OutputMode::file,
                                              .output_file = log});
    if (started) s.pid = *started;
    if (!started) {
      s.pid = 0;
      s.skip_reason = "cannot start podman system service";
      return;
    }
    while (!answers(s.socket)) {
      if (::waitpid(s.pid, nullptr, WNOHANG) == s.pid || std::chrono::steady_clock::now() - start > 60s) {
        s.pid = 0;
        std::ifstream in(log);
        s.skip_reason = "podman system service did not answer: " + std::string(std::istreambuf_iterator<char>(in), {});
        say("skipping every case: " + s.skip_reason);
        return;
      }
      std::this_thread::sleep_for(100ms);
    }
    say("podman system service answered /_ping on " + s.socket.string() + " after " + seconds_since(start) + " s");
    import_base_image(s);
  }

  void TearDown() override {
    EngineService& s = engine_service();
    if (s.dir.empty()) return;
    const auto start = std::chrono::steady_clock::now();
    if (s.pid > 0) stop(s.pid);
    // Containers outlive a killed service (conmon holds them); the CLI
    // reads the same configuration and removes them, locally: with
    // CONTAINER_HOST set (the build cases point `orchestrate build` at the
    // service with it) it would ask the dead service.
    ::unsetenv("CONTAINER_HOST");
    const ProcessResult removed = run_process({"podman", "rm", "--all", "--force", "--time", "0"});
    if (removed.exit_code != 0) say("podman rm: " + removed.output);
    unmount_under(s.dir);
    say("podman service stopped and cleaned up in " + seconds_since(start) + " s");
    unmount_and_remove(s.dir);
  }

 private:
  static void stop(pid_t pid) {
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid, nullptr, WNOHANG) != 0) return;  // reaped, or already reaped after a SIGKILL
      std::this_thread::sleep_for(100ms);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

[[maybe_unused]] ::testing::Environment* const g_environment =
    ::testing::AddGlobalTestEnvironment(new PodmanEnvironment);

}  // namespace
}  // namespace orc::integration
