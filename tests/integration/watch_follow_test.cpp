// Issue 29, point 7: `orchestrate watch --once --dry-run` on the example
// configuration (recipes/orchestrate.yaml, which has no `watch:`), run as
// the README shows it, from the repository's root: the real binary, a cache
// directory of its own, and the Debian archive fixture
// (tests/integration/debian-archive) served by Python's http.server as the
// mirror. With nothing recorded it is refused with what to add; with an
// offline image recorded (through site/image_state's API, as `images build`
// records one) the cycle follows that image's Debian suite and says so.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/site/image_state.hpp"
#include "tests/integration/http_server.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;

class WatchFollows : public ::testing::Test {
 protected:
  // `orchestrate watch --once --dry-run ARGS` in the repository's root.
  ProcessResult watch(const std::vector<std::string>& args, const std::string& mirror = "") {
    std::vector<std::string> argv = {"env",
                                     "-u",
                                     "ORCHESTRATE_IMAGE_PREFERENCE",
                                     "-u",
                                     "ORCHESTRATE_CONFIG",
                                     "-u",
                                     "ORCHESTRATE_DEBIAN_MIRROR",
                                     "ORCHESTRATE_CACHE_DIR=" + (m_dir.path() / "cache").string()};
    if (!mirror.empty()) argv.push_back("ORCHESTRATE_DEBIAN_MIRROR=" + mirror);
    argv.insert(argv.end(), {ORC_BINARY, "watch", "--once", "--dry-run"});
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, ORC_SOURCE_DIR);
  }
  TempDir m_dir{"orc-watch-follow"};
};

TEST_F(WatchFollows, NothingRecordedSaysWhatToAdd) {
  const ProcessResult run = watch({});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(run.output,
            "orchestrate: error: recipes/orchestrate.yaml: no 'watch:', and nothing here says what this site's build "
            "images are made from: no offline image is recorded (`orchestrate images build NAME` makes one, NAME one "
            "of 11.8-bookworm, 12.4-trixie, host-bookworm; the watcher then follows the Debian suite it is made "
            "from), and plans do not use the official nvidia/cuda tags (with ORCHESTRATE_IMAGE_PREFERENCE=official "
            "the watcher follows them). Or name what to watch under 'watch:' (recipes/schema.md, watch), e.g. "
            "`watch: {images: [{url: \"https://registry-1.docker.io/nvidia/cuda\", os: ubuntu22.04}]}`\n");
}

TEST_F(WatchFollows, ARecordedOfflineImageIsFollowedThroughItsSuite) {
  if (run_process({"python3", "--version"}).exit_code != 0) GTEST_SKIP() << "no python3 here";
  const fs::path www = m_dir.path() / "www";
  fs::create_directories(www / "debian");
  fs::copy(fs::path(ORC_SOURCE_DIR) / "tests/integration/debian-archive/dists", www / "debian" / "dists",
           fs::copy_options::recursive);
  HttpServer server(HttpServer::Mode::serve_directory, www, m_dir.path() / "port");
  ASSERT_NE(server.port(), 0) << "http.server did not start";
  const std::string mirror = "http://127.0.0.1:" + std::to_string(server.port()) + "/debian";
  // What `images build 12.4-trixie` records (the trixie index's versions).
  site::save_image_record(m_dir.path() / "cache" / "images.v1.json",
                          site::ImageRecord{.name = "12.4-trixie",
                                            .reference = "orchestrate/cuda:12.4-trixie",
                                            .id = "sha256:" + std::string(64, 'a'),
                                            .digests = {},
                                            .created = "2026-12-05T07:00:00Z",
                                            .toolkit = "12.4.131",
                                            .packages = {"nvidia-cuda-toolkit=12.4.131~12.4.1-2"},
                                            .rootfs_key = {},
                                            .engine = {}});
  const ProcessResult run = watch({}, mirror);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(run.output.starts_with(
      "recipes/orchestrate.yaml: no 'watch:'; following what this site's build images are made from:\n"
      "  Debian trixie (main, contrib, non-free), which orchestrate/cuda:12.4-trixie was made from (recorded by "
      "`orchestrate images build`)\n"
      "feed ok      debian " +
      mirror + " (1 offers)\n"))
      << run.output;
  EXPECT_NE(run.output.find("saxpy-nvcc/tier-next [patch]: no verified artifact set yet"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("dry run: 0 stale of 6 recipe x tier; nothing was built\n"), std::string::npos)
      << run.output;

  // --json says the same for scripts.
  const ProcessResult json = watch({"--json"}, mirror);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto report = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << json.output;
  EXPECT_EQ(report["followed"]["about"], nlohmann::json::array({"Debian trixie (main, contrib, non-free), which "
                                                                "orchestrate/cuda:12.4-trixie was made from "
                                                                "(recorded by `orchestrate images build`)"}));
  EXPECT_EQ(report["feeds"][0]["name"], "debian " + mirror);
  EXPECT_EQ(report["feeds"][0]["offers"], 1);
}

}  // namespace
}  // namespace orc::integration
