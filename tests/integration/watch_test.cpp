// The watcher's feeds (issue 14) against real servers on 127.0.0.1:
//   - Debian's docker-registry (scripts/start-registry.sh) holding an
//     nvidia/cuda-like repository: tags listed across pages, the filter's
//     tags with their manifest digests, a tag re-pushed with a new manifest
//     read as a moved digest, and a stopped registry as a failed poll that
//     names the feed.
//   - Python's http.server serving a directory laid out as NVIDIA's
//     redistributable index (redistrib_X.Y.Z.json files, CUDA and cuDNN),
//     and a Debian archive's dists/ (tests/integration/debian-archive: the
//     bookworm and trixie indexes' stanzas of our offline images' packages).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <streambuf>
#include <thread>

#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/app/watch/watch.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/layout.hpp"
#include "orchestrator/watch/debian.hpp"
#include "orchestrator/watch/feeds.hpp"
#include "tests/integration/host_build.hpp"
#include "tests/integration/http_server.hpp"
#include "tests/integration/process.hpp"
#include "tests/integration/registry_process.hpp"
#include "tests/integration/test_image.hpp"

namespace orc::watch {
namespace {

namespace fs = std::filesystem;
using integration::HttpServer;
using integration::RegistryProcess;
using integration::run_process;
using integration::TempDir;

registry::ClientOptions options(const std::string& url) {
  return registry::ClientOptions{.url = url, .retry = {.max_attempts = 1}};
}

class WatchFeeds : public ::testing::Test {
 protected:
  // Pushes an image under `tag`; returns its manifest digest.
  std::string push(registry::Client& c, const std::string& tag, const std::string& layer) {
    auto pushed = integration::push_test_image(c, tag, layer);
    EXPECT_TRUE(pushed) << (pushed ? "" : pushed.error());
    return pushed.value_or("");
  }
  TempDir m_dir{"orc-watch-it"};
};

TEST_F(WatchFeeds, ARegistryFeedListsEveryPageAndSeesADigestMove) {
  RegistryProcess server(m_dir.path() / "registry");
  if (!server.error().empty()) GTEST_SKIP() << server.error();
  const std::string url = server.url("nvidia/cuda");
  std::shared_ptr<net::Transport> transport = registry::make_curl_transport();
  registry::Client pusher(options(url), transport);
  std::map<std::string, std::string> digests;
  for (const char* tag :
       {"12.4.0-devel-ubuntu22.04", "12.4.1-devel-ubuntu22.04", "12.4.1-cudnn-devel-ubuntu22.04",
        "12.4.1-runtime-ubuntu22.04", "12.4.1-devel-ubuntu20.04", "13.0.2-devel-ubuntu22.04", "latest"})
    digests[tag] = push(pusher, tag, std::string("layer of ") + tag);

  // Two tags a page: the feed must follow Link to see all seven.
  auto feed =
      registry_feed(options(url), TagFilter{.flavour = "devel", .os = "ubuntu22.04", .cudnn = false}, transport, 2);
  EXPECT_EQ(feed->name(), "registry 127.0.0.1:" + std::to_string(server.port()) + "/nvidia/cuda");
  auto offers = feed->poll();
  ASSERT_TRUE(offers) << offers.error();
  std::map<std::string, std::string> seen;
  for (const auto& o : *offers) seen[o.image] = o.digest;
  const std::string base = "127.0.0.1:" + std::to_string(server.port()) + "/nvidia/cuda:";
  EXPECT_EQ(seen, (std::map<std::string, std::string>{
                      {base + "12.4.0-devel-ubuntu22.04", digests["12.4.0-devel-ubuntu22.04"]},
                      {base + "12.4.1-devel-ubuntu22.04", digests["12.4.1-devel-ubuntu22.04"]},
                      {base + "13.0.2-devel-ubuntu22.04", digests["13.0.2-devel-ubuntu22.04"]}}));
  for (const auto& o : *offers) EXPECT_EQ(o.detail, "devel ubuntu22.04");

  // The cuDNN flavour, through its own filter.
  auto cudnn = registry_feed(options(url), TagFilter{.flavour = "devel", .os = "", .cudnn = true}, transport)->poll();
  ASSERT_TRUE(cudnn) << cudnn.error();
  ASSERT_EQ(cudnn->size(), 1u);
  EXPECT_EQ(cudnn->front().toolkit, *util::Version::parse("12.4.1"));
  EXPECT_EQ(cudnn->front().detail, "cudnn devel ubuntu22.04");

  // A base rebuilt under the same tag: same toolkit, another digest.
  const std::string moved = push(pusher, "12.4.1-devel-ubuntu22.04", "rebuilt layer");
  ASSERT_NE(moved, digests["12.4.1-devel-ubuntu22.04"]);
  offers = feed->poll();
  ASSERT_TRUE(offers) << offers.error();
  const auto it = std::ranges::find(*offers, base + "12.4.1-devel-ubuntu22.04", &Offer::image);
  ASSERT_NE(it, offers->end());
  EXPECT_EQ(it->digest, moved);

  // The registry gone: a failed poll that names the feed.
  server.stop();
  offers = feed->poll();
  ASSERT_FALSE(offers);
  EXPECT_NE(offers.error().find(feed->name() + ": listing tags:"), std::string::npos) << offers.error();
}

TEST_F(WatchFeeds, TheRedistIndexFeedReadsEveryManifestItLinks) {
  if (run_process({"python3", "--version"}).exit_code != 0) GTEST_SKIP() << "no python3 here";
  const fs::path root = m_dir.path() / "www";
  fs::create_directories(root / "cuda" / "cuda_nvcc");  // the index also lists component folders
  fs::create_directories(root / "cudnn");
  std::ofstream(root / "cuda" / "redistrib_13.0.2.json")
      << R"({"release_date": "2025-10-09", "release_label": "13.0.2", "release_product": "cuda",
             "cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"}})";
  std::ofstream(root / "cuda" / "redistrib_13.5.0.json")
      << R"({"release_date": "2026-11-04", "release_label": "13.5.0", "release_product": "cuda",
             "cuda_nvcc": {"name": "CUDA NVCC", "version": "13.5.37"}})";
  std::ofstream(root / "cudnn" / "redistrib_9.28.1.json")
      << R"({"release_date": "2026-11-06", "release_label": "9.28.1", "release_product": "cudnn",
             "cudnn": {"name": "NVIDIA CUDA Deep Neural Network library", "version": "9.28.1.4",
                       "cuda_variant": ["12", "13"]}})";
  HttpServer server(HttpServer::Mode::serve_directory, root, m_dir.path() / "port");
  ASSERT_NE(server.port(), 0) << "http.server did not start";
  std::shared_ptr<net::Transport> transport = registry::make_curl_transport();
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());

  auto cuda = redist_feed(base + "/cuda/", transport)->poll();
  ASSERT_TRUE(cuda) << cuda.error();
  std::vector<std::string> toolkits;
  for (const auto& o : *cuda) toolkits.push_back(o.toolkit.str() + " " + o.detail);
  std::ranges::sort(toolkits);
  EXPECT_EQ(toolkits, (std::vector<std::string>{"13.0.2 redistrib_13.0.2.json (2025-10-09)",
                                                "13.5.0 redistrib_13.5.0.json (2026-11-04)"}));

  auto cudnn = redist_feed(base + "/cudnn", transport)->poll();
  ASSERT_TRUE(cudnn) << cudnn.error();
  ASSERT_EQ(cudnn->size(), 2u);
  EXPECT_EQ(cudnn->at(0).toolkit, util::Version(std::vector<int>{12}));
  EXPECT_EQ(cudnn->at(1).toolkit, util::Version(std::vector<int>{13}));
  EXPECT_EQ(cudnn->at(0).cudnn, *util::Version::parse("9.28.1.4"));

  // A manifest that is not one: the poll fails naming the file.
  std::ofstream(root / "cuda" / "redistrib_13.6.0.json") << "<html>not json</html>";
  cuda = redist_feed(base + "/cuda/", transport)->poll();
  ASSERT_FALSE(cuda);
  EXPECT_NE(cuda.error().find("redistrib_13.6.0.json: not a JSON object"), std::string::npos) << cuda.error();
  // Nothing listening: the feed says which URL failed.
  auto gone = redist_feed("http://127.0.0.1:9/cuda/", transport)->poll();
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().find("GET http://127.0.0.1:9/cuda/"), std::string::npos) << gone.error();
}

TEST_F(WatchFeeds, TheDebianFeedReadsEachImagesSuiteFromTheArchiveIndexes) {
  if (run_process({"python3", "--version"}).exit_code != 0) GTEST_SKIP() << "no python3 here";
  const fs::path root = m_dir.path() / "www";
  fs::create_directories(root / "debian");
  fs::copy(fs::path(ORC_SOURCE_DIR) / "tests/integration/debian-archive/dists", root / "debian" / "dists",
           fs::copy_options::recursive);
  HttpServer server(HttpServer::Mode::serve_directory, root, m_dir.path() / "port");
  ASSERT_NE(server.port(), 0) << "http.server did not start";
  std::shared_ptr<net::Transport> transport = registry::make_curl_transport();
  const std::string mirror = "http://127.0.0.1:" + std::to_string(server.port()) + "/debian/";
  const auto image = [](std::string name, std::string suite, std::vector<std::string> components,
                        std::vector<std::string> packages) {
    return WatchedImage{.name = name,
                        .reference = "orchestrate/cuda:" + name,
                        .suite = std::move(suite),
                        .components = std::move(components),
                        .packages = std::move(packages)};
  };
  const std::vector<WatchedImage> images = {
      image("11.8-bookworm", "bookworm", {"main", "contrib", "non-free"},
            {"nvidia-cuda-toolkit", "g++-11", "cmake", "make", "ninja-build", "python3"}),
      image("12.4-trixie", "trixie", {"main", "contrib", "non-free"},
            {"nvidia-cuda-toolkit", "g++-13", "cmake", "make", "ninja-build", "python3"}),
      image("host-bookworm", "bookworm", {"main"}, {"g++", "cmake", "make", "ninja-build", "python3"})};

  // bookworm's indexes are served as .xz, trixie's as .gz (no .xz there).
  auto offers = debian_feed(mirror, images, transport)->poll();
  ASSERT_TRUE(offers) << offers.error();
  ASSERT_EQ(offers->size(), 3u);
  const Offer& bookworm = offers->at(0);
  EXPECT_TRUE(bookworm.debian);
  EXPECT_EQ(bookworm.image, "orchestrate/cuda:11.8-bookworm");
  EXPECT_EQ(bookworm.toolkit, *util::Version::parse("11.8.0"));
  EXPECT_EQ(bookworm.detail, "bookworm main,contrib,non-free");
  EXPECT_EQ(bookworm.packages,
            (std::vector<std::string>{"nvidia-cuda-toolkit=11.8.89~11.8.0-5~deb12u1", "g++-11=11.3.0-12",
                                      "cmake=3.25.1-1", "make=4.3-4.1", "ninja-build=1.11.1-2~deb12u1",
                                      "python3=3.11.2-1+b1"}));
  EXPECT_TRUE(bookworm.missing.empty());
  EXPECT_EQ(offers->at(1).toolkit, *util::Version::parse("12.4.1"));
  EXPECT_EQ(offers->at(1).packages.front(), "nvidia-cuda-toolkit=12.4.131~12.4.1-2");
  EXPECT_EQ(offers->at(2).packages.front(), "g++=4:12.2.0-3");
  EXPECT_EQ(offers->at(2).toolkit.size(), 0u);  // no toolkit in the host-mount image

  // A newer revision beside the old one, as a plain index (neither .xz
  // nor .gz: the feed falls back to it), wins by dpkg's order; a package
  // the suite dropped is named.
  const fs::path non_free = root / "debian/dists/trixie/non-free/binary-amd64";
  fs::remove(non_free / "Packages.gz");
  std::ofstream(non_free / "Packages") << "Package: nvidia-cuda-toolkit\nVersion: 12.4.131~12.4.1-2\n"
                                          "Architecture: amd64\n\n"
                                          "Package: nvidia-cuda-toolkit\nVersion: 12.4.131~12.4.1-10\n"
                                          "Architecture: amd64\n\n"
                                          "Package: nvidia-cuda-toolkit\nVersion: 12.9.1~12.9.1-1\n"
                                          "Architecture: arm64\n";
  fs::remove(root / "debian/dists/trixie/main/binary-amd64/Packages.gz");
  std::ofstream(root / "debian/dists/trixie/main/binary-amd64/Packages") << "Package: cmake\nVersion: 3.31.6-2\n"
                                                                            "Architecture: amd64\n";
  offers = debian_feed(mirror, {images[1]}, transport)->poll();
  ASSERT_TRUE(offers) << offers.error();
  ASSERT_EQ(offers->size(), 1u);
  EXPECT_EQ(offers->at(0).packages,
            (std::vector<std::string>{"nvidia-cuda-toolkit=12.4.131~12.4.1-10", "cmake=3.31.6-2"}));
  EXPECT_EQ(offers->at(0).missing, (std::vector<std::string>{"g++-13", "make", "ninja-build", "python3"}));

  // A suite the mirror does not have: the poll fails naming what it tried.
  auto gone = debian_feed(mirror, {image("x", "sid", {"main"}, {"g++"})}, transport)->poll();
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().find("sid/main has no index (Packages.xz, Packages.gz, Packages answered 404"),
            std::string::npos)
      << gone.error();
  // A broken index: the poll fails naming the URL.
  std::ofstream(root / "debian/dists/bookworm/main/binary-amd64/Packages.xz") << "\xfd" "7zXZ broken";
  gone = debian_feed(mirror, {images[2]}, transport)->poll();
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().find("bookworm/main/binary-amd64/Packages.xz: not xz-compressed"), std::string::npos)
      << gone.error();
}

// One watch cycle end to end (dry run): a set built here on the host with
// nvcc 13.0 for an H100 tier, a registry offering 13.0.2 and 13.1.1 devel
// tags and a 12.9.1 one; policy minor takes 13.1.1, and says why it cannot
// judge 13.0.2 (a set records the table row, 13.0, and a host build has no
// image tag to tell the patch level from).
TEST_F(WatchFeeds, ADryRunCycleNamesTheStalePairAndWhy) {
  if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda here";
  if (run_process({"cmake", "--version"}).exit_code != 0) GTEST_SKIP() << "cmake is not installed";
  RegistryProcess server(m_dir.path() / "registry");
  if (!server.error().empty()) GTEST_SKIP() << server.error();
  const std::string url = server.url("nvidia/cuda");
  registry::Client pusher(options(url), registry::make_curl_transport());
  for (const char* tag : {"12.9.1-devel-ubuntu22.04", "13.0.2-devel-ubuntu22.04", "13.1.1-devel-ubuntu22.04"})
    push(pusher, tag, std::string("layer of ") + tag);

  ::setenv("ORCHESTRATE_HOST_TOOLKITS", "/usr/local/cuda", 1);
  ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir.path() / "keys").c_str(), 1);
  const auto configure = [&](const std::string& watch) {
    std::ofstream(m_dir.path() / "orchestrate.yaml")
        << "toolkits: [\"13.0\", \"13.1\"]\ntiers:\n  h:\n    gpus: [H100]\n  b:\n    gpus: [B200]\n"
        << watch << "recipes:\n  - name: nested\n    framework: cmake\n    source: {path: " << ORC_SOURCE_DIR
        << "/tests/integration/nested-project}\n    tiers: [h, b]\n    watch: minor\n    build:\n"
           "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n      - cmake --build build\n"
           "    artifacts: [\"**/libx.so\"]\n";
  };
  configure("watch:\n  images:\n    - {url: \"" + url + "\", os: ubuntu22.04}\n");
  std::ostringstream progress;
  const auto built = integration::build_on_host(m_dir.path(), "h", "nested", progress);
  ASSERT_EQ(built.builds.size(), 1u) << progress.str();
  ASSERT_EQ(built.builds.front().status, app::BuildStatus::built) << progress.str();

  const app::WatchReport report =
      app::watch_once({.config = m_dir.path() / "orchestrate.yaml", .store_root = m_dir.path() / "store"});
  ASSERT_EQ(report.feeds.size(), 1u);
  EXPECT_TRUE(report.feeds[0].ok) << report.feeds[0].error;
  EXPECT_EQ(report.feeds[0].offers, 3u);
  ASSERT_EQ(report.pairs.size(), 2u);
  const app::WatchPair& h = report.pairs[0];
  EXPECT_TRUE(h.built);
  EXPECT_EQ(h.policy, "minor");
  ASSERT_TRUE(h.decision.stale) << h.toolkit;
  const std::string base = "127.0.0.1:" + std::to_string(server.port()) + "/nvidia/cuda:";
  // 13.1's row marks its archs unconfirmed: a rebuild would probe its nvcc first.
  const std::string reason = "CUDA 13.0 -> 13.1.1 (" + base +
                             "13.1.1-devel-ubuntu22.04); the tables' archs of CUDA 13.1 are unconfirmed: its nvcc is "
                             "probed first";
  EXPECT_EQ(h.decision.reason, reason);
  EXPECT_TRUE(h.decision.unprobed);
  ASSERT_EQ(h.decision.declined.size(), 1u);
  EXPECT_NE(h.decision.declined[0].find("CUDA 13.0.2 (registry " + base.substr(0, base.size() - 1) +
                                        "): the set records CUDA 13.0 without its patch level"),
            std::string::npos)
      << h.decision.declined[0];
  EXPECT_FALSE(report.pairs[1].built);  // tier b was never built
  EXPECT_EQ(report.exit_code(), util::ExitCode::ok);
  // What the command prints.
  std::ostringstream out, err;
  cli::Io io{.out = out, .err = err};
  cli::emit(io, report, cli::Format::text);
  const std::string text = out.str();
  for (const std::string& line :
       std::vector<std::string>{"feed ok      registry " + base.substr(0, base.size() - 1) + " (3 offers)\n",
                                "nested/h [minor]: STALE: " + reason + "\n",
                                "nested/b [minor]: no verified artifact set yet (orchestrate build b -r nested)\n",
                                "dry run: 1 stale of 2 recipe x tier; nothing was built\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << " not in\n" << text;
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(io.exit_code, util::ExitCode::ok);

  // Every feed down: exit 3, nothing judged.
  server.stop();
  const app::WatchReport down =
      app::watch_once({.config = m_dir.path() / "orchestrate.yaml", .store_root = m_dir.path() / "store"});
  EXPECT_EQ(down.exit_code(), util::ExitCode::outside_failure);
  EXPECT_TRUE(down.pairs.empty());
  std::ostringstream json, json_err;
  cli::Io json_io{.out = json, .err = json_err};
  cli::emit(json_io, down, cli::Format::json);
  EXPECT_NE(json.str().find("\"ok\": false"), std::string::npos) << json.str();
  EXPECT_EQ(json_err.str(), "orchestrate: error: every feed failed; nothing could be judged\n");
  EXPECT_EQ(json_io.exit_code, util::ExitCode::outside_failure);
  ::unsetenv("ORCHESTRATE_HOST_TOOLKITS");
  ::unsetenv("ORCHESTRATE_KEYS_DIR");
}

// Without a container engine a stale pair cannot be rebuilt in the offered
// image: the cycle says why (exit 3), the notify URL gets one POST with the
// failure (a chat webhook's {"text"} and the report), and the service runs
// its cycles, a dead feed bringing the next one sooner, until stopped.
TEST_F(WatchFeeds, AFailedRebuildIsNotifiedAndTheServiceStopsOnSignal) {
  if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda here";
  if (run_process({"cmake", "--version"}).exit_code != 0) GTEST_SKIP() << "cmake is not installed";
  if (run_process({"python3", "--version"}).exit_code != 0) GTEST_SKIP() << "no python3 here";
  RegistryProcess server(m_dir.path() / "registry");
  if (!server.error().empty()) GTEST_SKIP() << server.error();
  const fs::path posts = m_dir.path() / "posts.txt";
  HttpServer hook(HttpServer::Mode::record_posts, posts, m_dir.path() / "hook-port");
  ASSERT_NE(hook.port(), 0) << "http.server did not start";
  const std::string url = server.url("nvidia/cuda");
  registry::Client pusher(options(url), registry::make_curl_transport());
  push(pusher, "13.1.1-devel-ubuntu22.04", "layer of 13.1.1");

  ::setenv("ORCHESTRATE_HOST_TOOLKITS", "/usr/local/cuda", 1);
  ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir.path() / "keys").c_str(), 1);
  ::setenv("ORCHESTRATE_CACHE_DIR", (m_dir.path() / "cache").c_str(), 1);
  ::setenv("DOCKER_HOST", ("unix://" + (m_dir.path() / "no-engine.sock").string()).c_str(), 1);
  const auto configure = [&](int notify_port) {
    std::ofstream(m_dir.path() / "orchestrate.yaml")
        << "toolkits: [\"13.0\", \"13.1\"]\ntiers:\n  h:\n    gpus: [H100]\nwatch:\n  policy: minor\n  notify: "
           "\"http://127.0.0.1:"
        << notify_port << "/hooks/T000/B000/secret\"\n  images:\n    - {url: \"" << url
        << "\", os: ubuntu22.04}\n    - {url: \"http://127.0.0.1:9/nvidia/cuda\"}\nrecipes:\n  - name: nested\n"
           "    framework: cmake\n    source: {path: "
        << ORC_SOURCE_DIR
        << "/tests/integration/nested-project}\n    tiers: [h]\n    build:\n"
           "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n      - cmake --build build\n"
           "    artifacts: [\"**/libx.so\"]\n";
  };
  configure(hook.port());
  std::ostringstream progress;
  const auto built = integration::build_on_host(m_dir.path(), "h", "nested", progress);
  ASSERT_EQ(built.builds.size(), 1u) << progress.str();
  ASSERT_EQ(built.builds.front().status, app::BuildStatus::built) << progress.str();

  app::WatchRequest request{.config = m_dir.path() / "orchestrate.yaml",
                            .store_root = m_dir.path() / "store",
                            .dry_run = false,
                            .engine = engine::EngineKind::docker,
                            .progress = nullptr,
                            .terminal = false,
                            .cancel = nullptr};
  const app::WatchReport report = app::watch_once(request);
  ASSERT_EQ(report.pairs.size(), 1u);
  const app::WatchPair& pair = report.pairs[0];
  ASSERT_TRUE(pair.decision.stale);
  EXPECT_EQ(pair.outcome.action, app::WatchAction::failed);
  EXPECT_NE(pair.outcome.detail.find("cannot reach the docker engine at "), std::string::npos) << pair.outcome.detail;
  EXPECT_EQ(report.exit_code(), util::ExitCode::outside_failure);
  EXPECT_TRUE(report.notified) << report.notify_error;
  std::ifstream in(posts);
  std::string line;
  ASSERT_TRUE(std::getline(in, line)) << "no POST reached the hook";
  ASSERT_TRUE(line.starts_with("application/json {")) << line;
  const auto body = nlohmann::json::parse(line.substr(line.find(' ') + 1));
  EXPECT_TRUE(
      body["text"].get<std::string>().starts_with("orchestrate watch: 0 rebuilt, 1 failed\n- nested/h: FAILED "))
      << body["text"];
  EXPECT_EQ(body["report"]["pairs"][0]["outcome"]["action"], "failed");
  EXPECT_FALSE(std::getline(in, line)) << "one POST per cycle";
  // The text report names the dead feed; the JSON is what the hook got.
  std::ostringstream out, err;
  cli::Io io{.out = out, .err = err};
  cli::emit(io, report, cli::Format::text);
  EXPECT_NE(out.str().find("feed FAILED  registry 127.0.0.1:9/nvidia/cuda: listing tags:"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("    rebuild FAILED (exit 3): "), std::string::npos) << out.str();
  // A notify URL that fails is said, never fatal, and names no path (its secret).
  configure(9);
  const app::WatchReport unheard = app::watch_once(request);
  EXPECT_FALSE(unheard.notified);
  EXPECT_TRUE(unheard.notify_error.starts_with("POST to the notify URL at http://127.0.0.1:9 failed: "))
      << unheard.notify_error;
  EXPECT_EQ(unheard.notify_error.find("secret"), std::string::npos);

  // The service, dry: a cycle, a status line, a sooner retry for the dead
  // feed, until the flag a signal handler would set.
  engine::CancelFlag stop;
  request.dry_run = true;
  request.cancel = &stop;
  // Stops the service once its second cycle is said, as SIGTERM would.
  class StopAfterTwo final : public std::streambuf {
   public:
    explicit StopAfterTwo(engine::CancelFlag& flag) : m_flag(flag) {}
    std::string text() {
      const std::lock_guard lock(m_mutex);
      return m_text;
    }

   protected:
    int_type overflow(int_type c) override {
      if (c == traits_type::eof()) return traits_type::not_eof(c);
      const std::lock_guard lock(m_mutex);
      m_text += traits_type::to_char_type(c);
      if (m_text.find(" cycle 2: ") != std::string::npos && m_text.ends_with("\n")) m_flag.request();
      return c;
    }

   private:
    engine::CancelFlag& m_flag;
    std::mutex m_mutex;
    std::string m_text;
  } buffer(stop);
  std::ostream status(&buffer);
  const auto start = std::chrono::steady_clock::now();
  const util::ExitCode code =
      app::watch_service(request, {.interval = std::chrono::seconds(1), .max_cycles = 0}, status);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(code, util::ExitCode::ok) << buffer.text();
  EXPECT_LT(took, 60.0) << buffer.text();
  const std::string lines = buffer.text();
  EXPECT_NE(lines.find(" cycle 1: feeds 1/2 ok, 1 stale, 0 rebuilt, 0 failed, 0 locked; feed failed: registry "
                       "127.0.0.1:9/nvidia/cuda: listing tags: "),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("; a feed failed, retrying in 1s\n"), std::string::npos) << lines;
  EXPECT_NE(lines.find(" cycle 2: "), std::string::npos) << lines;
  EXPECT_TRUE(lines.ends_with(" watcher stopped\n")) << lines;
  for (const char* name : {"ORCHESTRATE_HOST_TOOLKITS", "ORCHESTRATE_KEYS_DIR", "ORCHESTRATE_CACHE_DIR", "DOCKER_HOST"})
    ::unsetenv(name);
}

// A V100 tier built with Debian's CUDA 12.4 (its nvcc from toolchains/,
// scripts/install-cuda-toolkits.sh): a registry offering 13.0.2 under
// policy major does not take it, since CUDA 13 compiles no sm_70, and the
// report names the last toolkit that serves the tier; nothing is stale.
TEST_F(WatchFeeds, ATagThatDropsAGpuOfTheTierIsNotTaken) {
  const fs::path toolkit = integration::env_or("ORC_TOOLCHAINS", ORC_SOURCE_DIR "/toolchains") + "/cuda-12.4";
  if (::access((toolkit / "bin" / "nvcc").c_str(), X_OK) != 0)
    GTEST_SKIP() << "no Debian CUDA 12.4 at " << toolkit.string() << " (scripts/install-cuda-toolkits.sh)";
  if (run_process({"cmake", "--version"}).exit_code != 0) GTEST_SKIP() << "cmake is not installed";
  RegistryProcess server(m_dir.path() / "registry");
  if (!server.error().empty()) GTEST_SKIP() << server.error();
  const std::string url = server.url("nvidia/cuda");
  registry::Client pusher(options(url), registry::make_curl_transport());
  for (const char* tag : {"12.4.1-devel-ubuntu22.04", "13.0.2-devel-ubuntu22.04"})
    push(pusher, tag, std::string("layer of ") + tag);

  ::setenv("ORCHESTRATE_HOST_TOOLKITS", toolkit.c_str(), 1);
  ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir.path() / "keys").c_str(), 1);
  std::ofstream(m_dir.path() / "orchestrate.yaml")
      << "toolkits: [\"12.4\", \"13.0\"]\ntiers:\n  v:\n    gpus: [V100, A100]\nwatch:\n  policy: major\n  images:\n"
         "    - {url: \""
      << url
      << "\", os: ubuntu22.04}\nrecipes:\n  - name: nested\n    framework: cmake\n    source: {path: " << ORC_SOURCE_DIR
      << "/tests/integration/nested-project}\n    tiers: [v]\n    build:\n"
         "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n      - cmake --build build\n"
         "    artifacts: [\"**/libx.so\"]\n";
  std::ostringstream progress;
  const auto built = integration::build_on_host(m_dir.path(), "v", "nested", progress);
  ASSERT_EQ(built.builds.size(), 1u) << progress.str();
  ASSERT_EQ(built.builds.front().status, app::BuildStatus::built)
      << progress.str() << util::join(built.builds.front().errors, "\n");
  ASSERT_EQ(built.builds.front().toolkit->truncated(2), *util::Version::parse("12.4"));

  const app::WatchReport report =
      app::watch_once({.config = m_dir.path() / "orchestrate.yaml", .store_root = m_dir.path() / "store"});
  ASSERT_EQ(report.pairs.size(), 1u);
  const app::WatchPair& v = report.pairs[0];
  EXPECT_FALSE(v.decision.stale);
  const std::string base = "registry 127.0.0.1:" + std::to_string(server.port()) + "/nvidia/cuda";
  EXPECT_NE(
      std::ranges::find(v.decision.declined,
                        "CUDA 13.0.2 (" + base +
                            "): drops sm_70, which tier v needs; the last toolkit that serves the tier is CUDA 12.9"),
      v.decision.declined.end())
      << util::join(v.decision.declined, "\n");
  ::unsetenv("ORCHESTRATE_HOST_TOOLKITS");
  ::unsetenv("ORCHESTRATE_KEYS_DIR");
}

// Retention in the remote (keep: with --remote, cache gc --keep N --remote):
// three sets of one recipe x tier pushed to the real registry, keep 1: the
// two older artifact manifests are deleted (their tags with them), the
// newest and the moving RECIPE--TIER tag stay, and a second run removes
// nothing.
TEST_F(WatchFeeds, RemoteRetentionKeepsTheNewestSetsAndDeletesTheOthers) {
  RegistryProcess server(m_dir.path() / "registry");
  if (!server.error().empty()) GTEST_SKIP() << server.error();
  const fs::path store_root = m_dir.path() / "store";
  auto store = cache::Store::open(store_root);
  ASSERT_TRUE(store) << store.error().message;
  std::vector<std::string> hexes;
  for (int i = 1; i <= 3; ++i) {
    const fs::path file = m_dir.path() / ("lib" + std::to_string(i) + ".so");
    std::ofstream(file) << "set " << i;
    cache::NewArtifactSet set{.verified = true};
    set.manifest = {.recipe = "k",
                    .framework = "cmake",
                    .tier = "h",
                    .key = "key " + std::to_string(i),
                    .source_kind = "path",
                    .source_revision = "tree:" + std::to_string(i),
                    .engine = "host",
                    .image = "host",
                    .toolkit = "13.0",
                    .created = "2026-12-0" + std::to_string(i) + "T00:00:00Z"};
    set.manifest.files.push_back({.path = "lib/libk.so"});
    set.sources.push_back(file);
    auto entry = cache::store_artifact_set(*store, std::move(set));
    ASSERT_TRUE(entry) << entry.error().message;
    hexes.push_back(entry->manifest.hex());
  }
  const fs::path config = m_dir.path() / "orchestrate.yaml";
  std::ofstream(config) << "remote: " << server.url("team/artifacts")
                        << "\ntiers:\n  h:\n    gpus: [H100]\nrecipes:\n  - name: k\n    framework: cmake\n"
                           "    source: {path: src}\n    tiers: [h]\n";
  const app::PushReport pushed =
      app::push({.config = config, .store_root = store_root, .recipe = {}, .tier = {}, .digest = {}, .all = true});
  ASSERT_EQ(pushed.exit_code, util::ExitCode::ok);
  ASSERT_EQ(pushed.pushed.size(), 3u);
  registry::Client remote(options(server.url("team/artifacts")), registry::make_curl_transport());
  std::map<std::string, std::string> artifact_of;  // manifest hex -> artifact digest
  for (const auto& p : pushed.pushed) artifact_of[p.manifest.hex()] = p.artifact.to_string();

  const app::PruneReport pruned = app::prune_remote(config, 1);
  EXPECT_EQ(pruned.exit_code, util::ExitCode::ok) << pruned.error;
  EXPECT_EQ(pruned.kept, 1u);
  ASSERT_EQ(pruned.removed.size(), 2u);
  EXPECT_EQ(pruned.removed[0].created, "2026-12-02T00:00:00Z");
  EXPECT_EQ(pruned.removed[1].created, "2026-12-01T00:00:00Z");
  auto tags = remote.list_tags();
  ASSERT_TRUE(tags) << tags.error().message;
  std::vector<std::string> set_tags;
  for (const auto& t : *tags)
    if (t.starts_with("k--h")) set_tags.push_back(t);
  std::ranges::sort(set_tags);
  EXPECT_EQ(set_tags, (std::vector<std::string>{"k--h", "k--h--" + hexes[2].substr(0, 16)}));
  for (int i : {0, 1}) {
    auto gone = remote.get_manifest(artifact_of[hexes[i]]);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().kind, registry::ErrorKind::not_found);
  }
  EXPECT_TRUE(remote.get_manifest(artifact_of[hexes[2]]));
  EXPECT_TRUE(app::prune_remote(config, 1).removed.empty());
}

}  // namespace
}  // namespace orc::watch
