// The built image's ID in the build key: app::build against a docker engine
// whose socket does not exist, so the key is made (and explained) but no
// container can run. The image's record comes from a state file of the test.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <stdlib.h>
#include <unistd.h>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/images/images.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_config_head = R"(toolkits: ["13.0"]
tiers:
  tier-b:
    gpus: [)";
constexpr const char* k_config_tail = R"(]
recipes:
  - name: saxpy
    framework: cmake
    source: {path: src}
    tiers: [tier-b]
    build:
      - [cmake, -S, ., -B, build]
    artifacts: ["build/saxpy"]
)";

class BuildImageKey : public ::testing::Test {
 protected:
  void SetUp() override {
    // The host-mount image serves CUDA 13.0 only where the host has it.
    if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) GTEST_SKIP() << "no /usr/local/cuda/bin/nvcc on this host";
    m_dir = fs::temp_directory_path() / ("orc-image-key-" + std::to_string(::getpid()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir / "src");
    write_config("\"B200\"");
    std::ofstream(m_dir / "src" / "CMakeLists.txt") << "project(saxpy LANGUAGES CUDA)\n";
    save_env("ORCHESTRATE_CACHE_DIR", (m_dir / "cache").string());
    // Nothing answers here: a miss fails at the engine, after the key.
    save_env("DOCKER_HOST", "unix://" + (m_dir / "absent.sock").string());
  }
  void TearDown() override {
    for (const auto& [name, value] : m_saved)
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    if (!m_dir.empty()) fs::remove_all(m_dir);
  }

  void save_env(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    m_saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name.c_str(), value.c_str(), 1);
  }

  void write_config(const std::string& gpus) {
    std::ofstream(m_dir / "orchestrate.yaml") << k_config_head << gpus << k_config_tail;
  }

  void record_image(const std::string& id) {
    site::save_image_record(site::image_state_path(), site::ImageRecord{.name = "host-bookworm",
                                                                        .reference = "orchestrate/cuda:host-bookworm",
                                                                        .id = id,
                                                                        .digests = {},
                                                                        .created = "2026-11-29T00:00:00Z",
                                                                        .toolkit = "13.0.88",
                                                                        .packages = {},
                                                                        .rootfs_key = "k",
                                                                        .engine = "/absent.sock"});
  }

  BuildResult run() {
    std::ostringstream progress;
    const BuildReport report = build(BuildRequest{.config = m_dir / "orchestrate.yaml",
                                                  .tiers = {"tier-b"},
                                                  .recipes = {},
                                                  .engine = engine::EngineKind::docker,
                                                  .jobs = 1,
                                                  .explain = true,
                                                  .store_root = m_dir / "store",
                                                  .terminal = false},
                                     progress);
    EXPECT_EQ(report.builds.size(), 1u);
    return report.builds.empty() ? BuildResult{} : report.builds.front();
  }

  fs::path m_dir;
  std::vector<std::pair<std::string, std::optional<std::string>>> m_saved;
};

std::string errors(const BuildResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e + "\n";
  return out;
}

// Answers every request on a unix socket with a Docker engine's /version
// body, so `build` finds an engine and gets as far as the image check.
class VersionOnlyEngine {
 public:
  explicit VersionOnlyEngine(const fs::path& socket_path) {
    m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
    if (::bind(m_fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || ::listen(m_fd, 4) != 0)
      throw std::runtime_error("cannot listen on " + socket_path.string());
    m_thread = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        const int client = ::accept(m_fd, nullptr, nullptr);
        if (client < 0) return;
        std::string request;
        char buf[1024];
        while (request.find("\r\n\r\n") == std::string::npos) {
          const ssize_t n = ::read(client, buf, sizeof buf);
          if (n <= 0) break;
          request.append(buf, static_cast<std::size_t>(n));
        }
        const std::string body = R"({"Version":"24.0.7","ApiVersion":"1.43","MinAPIVersion":"1.12","Os":"linux"})";
        const std::string response =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\nConnection: close\r\n\r\n" + body;
        [[maybe_unused]] const auto written = ::write(client, response.data(), response.size());
        ::close(client);
      }
    });
  }
  ~VersionOnlyEngine() {
    m_thread.request_stop();
    ::shutdown(m_fd, SHUT_RDWR);
    ::close(m_fd);
  }

 private:
  int m_fd = -1;
  std::jthread m_thread;
};

TEST_F(BuildImageKey, AnImageNeverBuiltIsBadLocalStateNamingTheCommand) {
  const VersionOnlyEngine engine(m_dir / "engine.sock");
  save_env("DOCKER_HOST", "unix://" + (m_dir / "engine.sock").string());
  const BuildResult r = run();
  EXPECT_EQ(r.status, BuildStatus::failed);
  EXPECT_EQ(r.exit_code, util::ExitCode::bad_input) << errors(r);
  EXPECT_NE(errors(r).find("`orchestrate images build host-bookworm`"), std::string::npos) << errors(r);
  EXPECT_FALSE(r.manifest.has_value());
}

TEST_F(BuildImageKey, TheRecordedImageIdIsInTheKeyAndTheExplanation) {
  record_image("sha256:aaaa");
  const BuildResult first = run();
  // The key was made; the miss then found no engine: exit 3, nothing stored.
  EXPECT_EQ(first.exit_code, util::ExitCode::outside_failure) << errors(first);
  EXPECT_EQ(first.key.size(), 64u);
  EXPECT_FALSE(first.manifest.has_value());
  EXPECT_NE(first.explain.find("image.digest: sha256:aaaa + host cuda 13."), std::string::npos) << first.explain;
  // The image's host compiler is the build's: CMake's CXX and CUDA host compiler.
  EXPECT_NE(first.explain.find("]: CUDAHOSTCXX=g++\n"), std::string::npos) << first.explain;
  EXPECT_NE(first.explain.find("]: CXX=g++\n"), std::string::npos) << first.explain;
  EXPECT_EQ(run().key, first.key) << "the same image keys the same";

  record_image("sha256:bbbb");
  const BuildResult rebuilt = run();
  EXPECT_NE(rebuilt.key, first.key) << "a rebuilt image must miss";
  EXPECT_NE(rebuilt.explain.find("image.digest: sha256:bbbb + host cuda 13."), std::string::npos) << rebuilt.explain;
}

// The key holds what the tier's GPUs resolve to, not their names: a GB200
// beside the B200 (both 10.0) keys the same, so the stored build is a hit;
// an H100 (9.0) adds sm_90 and misses.
TEST_F(BuildImageKey, AGpuOfAnArchTheTierHasKeysTheSameAndANewArchDoesNot) {
  record_image("sha256:aaaa");
  const BuildResult b200 = run();
  ASSERT_EQ(b200.key.size(), 64u) << errors(b200);
  EXPECT_EQ(b200.explain.find("B200"), std::string::npos) << "no GPU name in the key:\n" << b200.explain;
  EXPECT_NE(b200.explain.find("archs.sass[0]: sm_100\n"), std::string::npos) << b200.explain;

  write_config("\"B200\", \"GB200\"");
  EXPECT_EQ(run().key, b200.key) << "a GPU of an arch the tier already has must not rebuild";

  write_config("\"B200\", \"H100\"");
  const BuildResult hopper = run();
  EXPECT_NE(hopper.key, b200.key) << "a GPU of a new arch must rebuild";
  EXPECT_NE(hopper.explain.find("archs.sass[0]: sm_90\n"), std::string::npos) << hopper.explain;
}

}  // namespace
}  // namespace orc::app
