// The watcher's feeds (issue 14) against real servers on 127.0.0.1:
//   - Debian's docker-registry (scripts/start-registry.sh) holding an
//     nvidia/cuda-like repository: tags listed across pages, the filter's
//     tags with their manifest digests, a tag re-pushed with a new manifest
//     read as a moved digest, and a stopped registry as a failed poll that
//     names the feed.
//   - Python's http.server serving a directory laid out as NVIDIA's
//     redistributable index (redistrib_X.Y.Z.json files, CUDA and cuDNN).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "orchestrator/app/watch/watch.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/layout.hpp"
#include "orchestrator/watch/feeds.hpp"
#include "tests/integration/host_build.hpp"
#include "tests/integration/process.hpp"
#include "tests/integration/registry_process.hpp"

namespace orc::watch {
namespace {

namespace fs = std::filesystem;
using integration::RegistryProcess;
using integration::run_process;
using integration::TempDir;

registry::ClientOptions options(const std::string& url) {
  return registry::ClientOptions{.url = url, .retry = {.max_attempts = 1}};
}

// A minimal OCI image manifest whose one layer is `layer`.
std::string image_manifest(const std::string& config, const std::string& layer) {
  const auto descriptor = [](std::string_view media, const std::string& bytes) {
    return std::string(R"({"mediaType":")") + std::string(media) + R"(","digest":")" +
           digest::sha256(bytes).to_string() + R"(","size":)" + std::to_string(bytes.size()) + "}";
  };
  return R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":)" +
         descriptor("application/vnd.oci.image.config.v1+json", config) + R"(,"layers":[)" +
         descriptor("application/vnd.oci.image.layer.v1.tar", layer) + "]}";
}

class WatchFeeds : public ::testing::Test {
 protected:
  // Pushes an image under `tag`; returns its manifest digest.
  std::string push(registry::Client& c, const std::string& tag, const std::string& layer) {
    const std::string config = R"({"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}})";
    EXPECT_TRUE(c.push_blob(digest::sha256(config), config));
    EXPECT_TRUE(c.push_blob(digest::sha256(layer), layer));
    const std::string manifest = image_manifest(config, layer);
    auto put = c.put_manifest(tag, registry::k_oci_manifest, manifest);
    EXPECT_TRUE(put) << (put ? "" : put.error().message);
    return digest::sha256(manifest).to_string();
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

// Python's http.server on a free port of 127.0.0.1, stopped by PID.
class HttpServer {
 public:
  explicit HttpServer(const fs::path& root, const fs::path& port_file) {
    const std::string script =
        "import functools, http.server, sys\n"
        "handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])\n"
        "server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)\n"
        "open(sys.argv[2], 'w').write(str(server.server_address[1]))\n"
        "server.serve_forever()\n";
    const auto started = run_process({"sh", "-c", "python3 -c \"$0\" \"$1\" \"$2\" >/dev/null 2>&1 & echo $!", script,
                                      root.string(), port_file.string()});
    m_pid = std::atoi(started.output.c_str());
    for (int i = 0; i < 100 && m_port == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::ifstream(port_file) >> m_port;
    }
  }
  ~HttpServer() {
    if (m_pid > 0) ::kill(m_pid, SIGTERM);
  }
  int port() const { return m_port; }

 private:
  int m_pid = 0;
  int m_port = 0;
};

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
  HttpServer server(root, m_dir.path() / "port");
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
  EXPECT_EQ(h.decision.reason, "CUDA 13.0 -> 13.1.1 (" + base + "13.1.1-devel-ubuntu22.04)");
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
                                "nested/h [minor]: STALE: CUDA 13.0 -> 13.1.1 (" + base + "13.1.1-devel-ubuntu22.04)\n",
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

}  // namespace
}  // namespace orc::watch
