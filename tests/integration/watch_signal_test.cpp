// The real orchestrate binary against feeds that hold it or hold nothing
// (issue 28), served by Python's http.server on 127.0.0.1:
//   - a redist index whose manifests trickle (headers and one byte, then
//     nothing for an hour): `watch --once` and `watch --interval` each get
//     SIGTERM (and --once SIGINT) while the GET is in flight, and must exit
//     with 128 + the signal and say they stopped, well inside a 10 s bound
//     (they used to sit out curl's 30 s stall and 60 s limits per manifest,
//     with up to 4,096 manifests to go); the service also while it waits
//     between cycles;
//   - the same index under --deadline 2s: the cycle stops itself, exit 3;
//   - a redist page that links no manifest, and a Debian archive whose
//     indexes are empty: a failed feed that says what was expected, not
//     "feed ok (0 offers)".
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "orchestrator/util/process.hpp"
#include "tests/integration/http_server.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// How a started orchestrate ended.
struct Ended {
  bool exited = false;  // on its own, inside the bound
  int status = -1;      // the shell's: exit code, or 128 + signal
  double seconds = 0;   // from the signal (or the start) to the exit
  std::string output;   // stdout and stderr
};

// The output holds `text` (a line or a line's start).
void expect_said(const Ended& ended, const std::string& text) {
  EXPECT_NE(ended.output.find(text), std::string::npos) << "not said: " << text << "\nin:\n" << ended.output;
}

class WatchSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run_process({"python3", "--version"}).exit_code != 0) GTEST_SKIP() << "no python3 here";
    const fs::path www = m_dir.path() / "www";
    fs::create_directories(www / "slow");
    fs::create_directories(www / "fast");
    fs::create_directories(www / "empty" / "cuda_nvcc");  // a listing of folders, no manifest
    std::ofstream(www / "slow" / "redistrib_13.0.2.json") << "{}";
    std::ofstream(www / "fast" / "redistrib_13.0.2.json")
        << R"({"release_date": "2025-10-09", "release_label": "13.0.2", "release_product": "cuda"})";
    // Each component of trixie an empty index: a gzip member of nothing.
    for (const char* component : {"main", "contrib", "non-free"}) {
      const fs::path dir = www / "debian/dists/trixie" / component / "binary-amd64";
      fs::create_directories(dir);
      std::ofstream(dir / "Packages.gz", std::ios::binary)
          << std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00", 20);
    }
    m_server = std::make_unique<HttpServer>(HttpServer::Mode::trickle_slow_json, www, m_dir.path() / "port");
    ASSERT_NE(m_server->port(), 0) << "http.server did not start";
    m_base = "http://127.0.0.1:" + std::to_string(m_server->port());
  }

  // orchestrate.yaml with `watch` as its watch: mapping.
  fs::path configure(const std::string& watch) {
    const fs::path config = m_dir.path() / "orchestrate.yaml";
    std::ofstream(config) << "toolkits: [\"13.0\"]\ntiers:\n  h:\n    gpus: [H100]\nwatch:\n"
                          << watch
                          << "recipes:\n  - name: nested\n    framework: cmake\n    source: {path: " << ORC_SOURCE_DIR
                          << "/tests/integration/nested-project}\n    tiers: [h]\n    build:\n"
                             "      - cmake -S . -B build\n      - cmake --build build\n"
                             "    artifacts: [\"**/libx.so\"]\n";
    return config;
  }

  // Starts `orchestrate ARGS`, its output into a file, its cache here.
  int start(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {ORC_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    m_output = m_dir.path() / ("output-" + std::to_string(++m_runs) + ".txt");
    const auto pid = util::start_process({.argv = argv,
                                          .env = {{"ORCHESTRATE_CACHE_DIR", cache().string()}},
                                          .output = util::OutputMode::file,
                                          .output_file = m_output});
    EXPECT_TRUE(pid) << (pid ? "" : pid.error().message);
    return pid.value_or(-1);
  }

  // Waits (30 s at most) until a manifest GET is held by the server.
  bool wait_for_stall() {
    const fs::path stalled = m_dir.path() / "port.stalled";
    for (const auto until = Clock::now() + std::chrono::seconds(30); Clock::now() < until;) {
      if (!slurp(stalled).empty()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // Waits (30 s at most) until the output holds `text`.
  bool wait_for_output(const std::string& text) {
    for (const auto until = Clock::now() + std::chrono::seconds(30); Clock::now() < until;) {
      if (slurp(m_output).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // Sends `signal` (0: none) and waits up to 10 s for the exit; a process
  // still there then is killed and reported as not exited.
  Ended stop(int pid, int signal) {
    if (signal != 0) ::kill(pid, signal);
    const auto from = Clock::now();
    Ended out;
    int status = 0;
    while (Clock::now() - from < std::chrono::seconds(10)) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        out.exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - from).count();
    if (!out.exited) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    out.output = slurp(m_output);
    return out;
  }

  fs::path cache() const { return m_dir.path() / "cache"; }

  // What the cycle left in its cache directory: nothing, for a dry run that never got past the feeds.
  std::vector<std::string> left_in_cache() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(cache(), ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      out.push_back(it->path().lexically_relative(cache()).string());
    return out;
  }

  TempDir m_dir{"orc-watch-signal"};
  std::unique_ptr<HttpServer> m_server;
  std::string m_base;
  fs::path m_output;
  int m_runs = 0;
};

TEST_F(WatchSignals, OnceStopsOnSigtermAndSigintWhileAManifestTrickles) {
  const fs::path config = configure("  redist: [\"" + m_base + "/slow/\"]\n");
  for (const int signal : {SIGTERM, SIGINT}) {
    fs::remove(m_dir.path() / "port.stalled");
    const int pid = start({"watch", "--once", "--dry-run", "-f", config.string()});
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(wait_for_stall()) << slurp(m_output);
    const Ended ended = stop(pid, signal);
    const std::string name = signal == SIGTERM ? "SIGTERM" : "SIGINT";
    ASSERT_TRUE(ended.exited) << name << " was not honoured in 10 s:\n" << ended.output;
    std::cout << "watch --once exited " << ended.seconds << " s after " << name << "\n";
    EXPECT_EQ(ended.status, 128 + signal) << ended.output;
    expect_said(ended, "feed FAILED  redist " + m_base + "/slow/: not read: stopped by " + name + "\n");
    expect_said(ended, "orchestrate: watch stopped by " + name +
                           ": the cycle was cut short (nothing half-done is stored; the next cycle starts "
                           "over)\n");
    EXPECT_EQ(left_in_cache(), std::vector<std::string>{});
  }
}

TEST_F(WatchSignals, TheServiceStopsOnSigtermMidCycleAndBetweenCycles) {
  // Mid-cycle: the first cycle's manifest trickles.
  fs::path config = configure("  redist: [\"" + m_base + "/slow/\"]\n");
  int pid = start({"watch", "--interval", "1h", "--dry-run", "-f", config.string()});
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_stall()) << slurp(m_output);
  Ended ended = stop(pid, SIGTERM);
  ASSERT_TRUE(ended.exited) << "SIGTERM was not honoured in 10 s:\n" << ended.output;
  std::cout << "watch --interval exited " << ended.seconds << " s after SIGTERM (mid-cycle)\n";
  EXPECT_EQ(ended.status, 143) << ended.output;
  expect_said(ended, " cycle 1: feeds 0/1 ok, 0 stale, 0 rebuilt, 0 failed, 0 locked; feed failed: redist " + m_base +
                         "/slow/: not read: stopped by SIGTERM; stopping\n");
  EXPECT_TRUE(ended.output.ends_with(" watcher stopped by SIGTERM\n")) << ended.output;
  EXPECT_EQ(left_in_cache(), std::vector<std::string>{});

  // Between cycles: a feed that answers, then an hour's wait.
  config = configure("  redist: [\"" + m_base + "/fast/\"]\n");
  pid = start({"watch", "--interval", "1h", "--dry-run", "-f", config.string()});
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_output("; next in 1h\n")) << slurp(m_output);
  ended = stop(pid, SIGTERM);
  ASSERT_TRUE(ended.exited) << "SIGTERM was not honoured in 10 s:\n" << ended.output;
  std::cout << "watch --interval exited " << ended.seconds << " s after SIGTERM (waiting)\n";
  EXPECT_EQ(ended.status, 143) << ended.output;
  expect_said(ended, " cycle 1: feeds 1/1 ok, 0 stale, 0 rebuilt, 0 failed, 0 locked; next in 1h\n");
  EXPECT_TRUE(ended.output.ends_with(" watcher stopped by SIGTERM\n")) << ended.output;
}

TEST_F(WatchSignals, TheCyclesDeadlineStopsAFeedThatTrickles) {
  const fs::path config = configure("  redist: [\"" + m_base + "/slow/\"]\n");
  const int pid = start({"watch", "--once", "--dry-run", "--deadline", "2s", "-f", config.string()});
  ASSERT_GT(pid, 0);
  const Ended ended = stop(pid, 0);
  ASSERT_TRUE(ended.exited) << "the 2 s deadline did not end the cycle in 10 s:\n" << ended.output;
  EXPECT_EQ(ended.status, 3) << ended.output;
  const std::string why = "the cycle's deadline of 2s passed (watch --deadline D sets it)";
  expect_said(ended, "feed FAILED  redist " + m_base + "/slow/: not read: " + why + "\n");
  expect_said(ended, "orchestrate: error: " + why +
                         ": the cycle was stopped (nothing half-done is stored; the next cycle starts over)\n");
  EXPECT_EQ(left_in_cache(), std::vector<std::string>{});
}

TEST_F(WatchSignals, FeedsThatListNothingAreFailedFeedsThatSayWhatWasExpected) {
  const fs::path config = configure("  redist: [\"" + m_base + "/empty/\"]\n  debian: {mirror: \"" + m_base +
                                    "/debian\", images: [12.4-trixie]}\n");
  const int pid = start({"watch", "--once", "--dry-run", "-f", config.string()});
  ASSERT_GT(pid, 0);
  const Ended ended = stop(pid, 0);
  ASSERT_TRUE(ended.exited) << ended.output;
  EXPECT_EQ(ended.status, 3) << ended.output;
  expect_said(ended, "feed FAILED  redist " + m_base +
                         "/empty/: the page links no redistrib_X.Y.Z.json manifest; expected NVIDIA's "
                         "redistributable index, a directory such as "
                         "https://developer.download.nvidia.com/compute/cuda/redist/ whose page links one "
                         "redistrib_X.Y.Z.json per release: check this 'watch: redist' URL\n");
  expect_said(ended, "feed FAILED  debian " + m_base +
                         "/debian: the indexes of trixie (main, contrib, non-free) list no package at all; "
                         "expected Debian Packages indexes that hold nvidia-cuda-toolkit, ");
  expect_said(ended, "orchestrate: error: every feed failed; nothing could be judged\n");
}

}  // namespace
}  // namespace orc::integration
