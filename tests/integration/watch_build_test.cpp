// `orchestrate watch` rebuilding for real (issue 14), against a dockerd this
// binary starts (build_docker_test.cpp's environment) and a Debian
// docker-registry on 127.0.0.1 standing in for nvidia/cuda:
//   - the "nvidia/cuda" images are the host-bookworm build image with the
//     host's CUDA 13.0 toolkit copied in at /usr/local/cuda, built through
//     the engine API, tagged 13.0.1-devel-ubuntu24.04 and
//     13.0.2-devel-ubuntu24.04 (two images: the second has one more label,
//     so its manifest digest differs) and pushed with the docker CLI;
//   - three recipes are built in the 13.0.1 image (the watcher's own build
//     path); a cycle with 13.0.2 in the registry rebuilds only the one whose
//     policy and range allow it, pulls the image through the engine, stores
//     a manifest that says why, and pushes it to the registry remote; a
//     second cycle does nothing and says so; a dead second feed is named and
//     does not stop the first;
//   - 13.0.2 rebuilt under its tag (a moved digest): a held lock makes the
//     cycle skip the pair and name the holder; a cancel during the build
//     stores nothing and the next cycle rebuilds it; two `orchestrate watch
//     --once` processes at once store one set, not two;
//   - the image-catalog feed: a set built by the plan in host-bookworm, the
//     archive's bookworm index read from 127.0.0.1, the image made again
//     when the index has a newer package than the image's record, and the
//     set rebuilt in it.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <streambuf>
#include <thread>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/images/images.hpp"
#include "orchestrator/app/watch/watch.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/imaging/rootfs.hpp"
#include "orchestrator/registry/client.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/util/file_lock.hpp"
#include "orchestrator/watch/debian.hpp"
#include "orchestrator/watch/probe.hpp"
#include "tests/integration/engine_service.hpp"
#include "tests/integration/http_server.hpp"
#include "tests/integration/process.hpp"
#include "tests/integration/registry_process.hpp"
#include "tests/integration/watched_output.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class WatchRebuild : public ::testing::Test {
 protected:
  void SetUp() override {
    const EngineService& s = engine_service();
    if (!s.skip_reason.empty()) GTEST_SKIP() << s.skip_reason;
    ASSERT_TRUE(s.setup_error.empty()) << s.setup_error;
    if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda here";
    if (run_process({"docker", "--version"}).exit_code != 0)
      GTEST_SKIP() << "the docker CLI is not installed (apt-get install docker.io); it pushes the test images";
    ::setenv("ORCHESTRATE_CACHE_DIR", (s.dir / "cache").c_str(), 1);
    ::setenv("ORCHESTRATE_KEYS_DIR", (s.dir / "keys").c_str(), 1);
    ::setenv("DOCKER_HOST", ("unix://" + s.socket.string()).c_str(), 1);
    ::unsetenv("ORCHESTRATE_REMOTE");
    // One registry and one set of images for the binary's cases: making
    // them is most of a case's time. The cases only add tags to it.
    if (!s_registry) {
      s_registry = std::make_unique<RegistryProcess>(s_shared.path() / "registry");
      if (!s_registry->error().empty()) GTEST_SKIP() << s_registry->error();
      s_base = "127.0.0.1:" + std::to_string(s_registry->port()) + "/nvidia/cuda:";
      m_registry = s_registry.get();
      m_base = s_base;
      make_cuda_images();
    }
    if (!s_registry->error().empty()) GTEST_SKIP() << s_registry->error();
    m_registry = s_registry.get();
    m_base = s_base;
  }

  static void TearDownTestSuite() { s_registry.reset(); }

  ProcessResult docker(std::vector<std::string> args) {
    args.insert(args.begin(), {"docker", "-H", "unix://" + engine_service().socket.string()});
    return run_process(args);
  }

  // The host-bookworm build image with the host's CUDA 13.0 inside, as
  // `tag` of the test registry, with `label` making its digest its own.
  void push_cuda_image(const std::string& tag, const std::string& label) {
    const fs::path context = s_shared.path() / ("context-" + tag);
    fs::create_directories(context);
    std::ofstream(context / "Dockerfile") << "FROM orchestrate/cuda:host-bookworm\n"
                                             "COPY cuda /usr/local/cuda\n"
                                             "LABEL org.orchestrate.test=\""
                                          << label << "\"\n";
    if (!fs::exists(m_cuda_copy)) {
      // nvcc, its compilers and headers, and the runtime libraries a CMake
      // CUDA project links; not the 1.5 GB of math libraries.
      const std::string script =
          "set -e; mkdir -p \"$1/lib\"; cp -a /usr/local/cuda/bin /usr/local/cuda/nvvm /usr/local/cuda/include "
          "\"$1/\"; cp -a /usr/local/cuda/lib/libcudart* /usr/local/cuda/lib/libcudadevrt.a "
          "/usr/local/cuda/lib/libculibos.a /usr/local/cuda/lib/stubs \"$1/lib/\"; ln -s lib \"$1/lib64\"; "
          "mkdir -p \"$1/targets/x86_64-linux\"; ln -s ../../include \"$1/targets/x86_64-linux/include\"; "
          "ln -s ../../lib \"$1/targets/x86_64-linux/lib\"";
      const auto copied = run_process({"sh", "-c", script, "sh", m_cuda_copy.string()});
      ASSERT_EQ(copied.exit_code, 0) << copied.output;
    }
    ASSERT_EQ(run_process({"cp", "-al", m_cuda_copy.string(), (context / "cuda").string()}).exit_code, 0);
    auto engine = engine::DockerEngine::connect(engine_service().socket);
    ASSERT_TRUE(engine) << engine.error().message;
    struct Quiet final : engine::LogSink {
      void on_output(engine::OutputStream, std::string_view) override {}
    } quiet;
    const auto start = Clock::now();
    auto built = engine->build_image(context, m_base + tag, {}, quiet);
    ASSERT_TRUE(built) << built.error().message;
    const auto pushed = docker({"push", m_base + tag});
    ASSERT_EQ(pushed.exit_code, 0) << pushed.output;
    say("pushed " + m_base + tag + " (" + label + ") in " + seconds_since(start) + " s");
    // The engine must pull it back: the watcher's pull is not a no-op.
    ASSERT_EQ(docker({"rmi", m_base + tag}).exit_code, 0);
    fs::remove_all(context);
  }

  void make_cuda_images() {
    const auto start = Clock::now();
    const app::ImageBuildResult image = app::build_image({.name = "host-bookworm",
                                                          .engine_socket = engine_service().socket,
                                                          .cache_dir = fs::path(ORC_FIXTURES_DIR) / "images",
                                                          .images_dir = fs::path(ORC_SOURCE_DIR) / "images",
                                                          .keep_rootfs = true},
                                                         std::cout);
    ASSERT_TRUE(image.record.id.starts_with("sha256:")) << image.record.id;
    say("host-bookworm ready in " + seconds_since(start) + " s");
    push_cuda_image("13.0.1-devel-ubuntu24.04", "13.0.1");
    push_cuda_image("13.0.2-devel-ubuntu24.04", "13.0.2");
    // A release the tables do not know, as a mislabelled mirror would
    // offer it: its nvcc is 13.0's.
    push_cuda_image("13.6.0-devel-ubuntu24.04", "13.6.0, but nvcc 13.0");
  }

  std::string recipe(const std::string& name, const std::string& extra) {
    return "  - name: " + name + "\n    framework: cmake\n    source: {path: " + ORC_SOURCE_DIR +
           "/tests/integration/nested-project}\n    tiers: [h]\n" + extra +
           "    build:\n      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n      - cmake --build build\n"
           "    artifacts: [\"**/libx.so\"]\n";
  }

  // `next` (policy major) only where a case is about it: it would be
  // rebuilt beside `follows` whenever 13.0.2 moves.
  void write_config(bool with_next) {
    m_recipes = with_next ? 4 : 3;
    std::ofstream(m_config) << "remote: " << m_registry->url("team/artifacts")
                            << "\ntiers:\n  h:\n    gpus: [H100]\nwatch:\n  images:\n"
                            << "    - {url: \"" << m_registry->url("nvidia/cuda") << "\", os: ubuntu24.04}\n"
                            << "    - {url: \"http://127.0.0.1:9/nvidia/cuda\"}\n"
                            << "recipes:\n"
                            << recipe("follows", "") << recipe("pinned", "    watch: pinned\n")
                            << recipe("capped", "    requires: {cuda: \">=13.0,<13.0.2\"}\n")
                            << (with_next ? recipe("next", "    watch: major\n") : std::string());
  }

  // The first sets, built the way the watcher builds: in the 13.0.1 image.
  void build_in_13_0_1() {
    auto engine = engine::DockerEngine::connect(engine_service().socket);
    ASSERT_TRUE(engine) << engine.error().message;
    auto pulled = engine->pull_image(m_base + "13.0.1-devel-ubuntu24.04");
    ASSERT_TRUE(pulled) << pulled.error().message;
    ASSERT_FALSE(pulled->digests.empty());
    const std::string digest = pulled->digests.front().substr(pulled->digests.front().find('@') + 1);
    const auto report =
        app::build(app::BuildRequest{.config = m_config,
                                     .tiers = {"h"},
                                     .recipes = {},
                                     .engine = engine::EngineKind::docker,
                                     .jobs = 2,
                                     .explain = false,
                                     .store_root = m_store,
                                     .terminal = false,
                                     .keep_failed = false,
                                     .image = app::ImageOverride{.reference = m_base + "13.0.1-devel-ubuntu24.04",
                                                                 .digest = digest,
                                                                 .toolkit = *util::Version::parse("13.0.1")}},
                   std::cout);
    ASSERT_EQ(report.builds.size(), m_recipes);
    for (const auto& b : report.builds) ASSERT_EQ(b.status, app::BuildStatus::built) << util::join(b.errors, "\n");
  }

  app::WatchReport cycle(std::ostream& progress = std::cout, engine::CancelFlag* cancel = nullptr) {
    const auto start = Clock::now();
    app::WatchReport report = app::watch_once(app::WatchRequest{.config = m_config,
                                                                .store_root = m_store,
                                                                .dry_run = false,
                                                                .engine = engine::EngineKind::docker,
                                                                .progress = &progress,
                                                                .terminal = false,
                                                                .cancel = cancel});
    say("watch cycle in " + seconds_since(start) + " s:\n" + text(report));
    return report;
  }

  static std::string text(const app::WatchReport& report) {
    std::ostringstream out, err;
    cli::Io io{.out = out, .err = err};
    cli::emit(io, report, cli::Format::text);
    return out.str() + err.str();
  }

  const app::WatchPair& pair(const app::WatchReport& report, const std::string& recipe) {
    const auto it = std::ranges::find(report.pairs, recipe, &app::WatchPair::recipe);
    EXPECT_NE(it, report.pairs.end()) << recipe;
    return *it;
  }

  std::size_t sets_of(const std::string& recipe) {
    auto store = cache::Store::open(m_store);
    EXPECT_TRUE(store) << store.error().message;
    auto sets = store->index().list({.recipe = recipe, .tier = "h", .key = {}, .verified_only = false});
    EXPECT_TRUE(sets) << sets.error().message;
    return sets ? sets->size() : 0;
  }

  cache::Manifest manifest(const digest::Digest& d) {
    auto store = cache::Store::open(m_store);
    auto bytes = store->read_blob(d);
    EXPECT_TRUE(bytes) << bytes.error().message;
    auto parsed = cache::parse_manifest(*bytes);
    EXPECT_TRUE(parsed) << parsed.error().message;
    return *parsed;
  }

  std::string tag_digest(const std::string& tag) {
    registry::Client client({.url = m_registry->url("nvidia/cuda")}, registry::make_curl_transport());
    auto m = client.get_manifest(tag);
    EXPECT_TRUE(m) << m.error().message;
    return m ? m->digest.to_string() : std::string();
  }

  TempDir m_dir{"orc-watch-build"};
  fs::path m_cuda_copy = s_shared.path() / "cuda";
  fs::path m_config = m_dir.path() / "orchestrate.yaml";
  fs::path m_store = m_dir.path() / "store";
  static inline TempDir s_shared{"orc-watch-build-shared"};
  static inline std::unique_ptr<RegistryProcess> s_registry;
  static inline std::string s_base;
  RegistryProcess* m_registry = nullptr;
  std::string m_base;
  std::size_t m_recipes = 0;
};

TEST_F(WatchRebuild, RebuildsWhatPolicyAndRangeAllowOnceVerifiedStoredAndPushed) {
  write_config(true);
  build_in_13_0_1();
  const std::string digest_13_0_2 = tag_digest("13.0.2-devel-ubuntu24.04");

  const app::WatchReport first = cycle();
  ASSERT_EQ(first.feeds.size(), 2u);
  EXPECT_TRUE(first.feeds[0].ok) << first.feeds[0].error;
  EXPECT_FALSE(first.feeds[1].ok);
  EXPECT_NE(first.feeds[1].error.find("registry 127.0.0.1:9/nvidia/cuda: listing tags:"), std::string::npos)
      << first.feeds[1].error;
  EXPECT_EQ(first.exit_code(), util::ExitCode::ok) << text(first);

  const app::WatchPair& follows = pair(first, "follows");
  ASSERT_EQ(follows.outcome.action, app::WatchAction::rebuilt) << text(first);
  EXPECT_EQ(follows.decision.reason, "CUDA 13.0.1 -> 13.0.2 (" + m_base + "13.0.2-devel-ubuntu24.04)");
  EXPECT_EQ(follows.outcome.image_digest, digest_13_0_2);
  ASSERT_TRUE(follows.outcome.set);
  EXPECT_TRUE(follows.outcome.pushed.starts_with("follows--h--")) << follows.outcome.pushed;
  EXPECT_NE(follows.outcome.smoke, "");  // "not run: ..." without a GPU, a result with one
  // The new set says why it exists, signed with the rest of its manifest.
  const cache::Manifest rebuilt = manifest(*follows.outcome.set);
  ASSERT_TRUE(rebuilt.trigger);
  EXPECT_EQ(rebuilt.trigger->reason, follows.decision.reason);
  EXPECT_EQ(rebuilt.trigger->from_toolkit, "13.0.1");
  EXPECT_EQ(rebuilt.trigger->from_image, m_base + "13.0.1-devel-ubuntu24.04");
  EXPECT_EQ(rebuilt.trigger->from_set, *follows.current_set);
  EXPECT_EQ(rebuilt.trigger->to_toolkit, "13.0.2");
  EXPECT_EQ(rebuilt.trigger->to_image_digest, digest_13_0_2);
  EXPECT_EQ(rebuilt.image, m_base + "13.0.2-devel-ubuntu24.04");
  EXPECT_EQ(rebuilt.image_digest, digest_13_0_2);
  EXPECT_EQ(rebuilt.files.size(), 1u);
  EXPECT_EQ(rebuilt.files.front().embedded_sass.names(), (std::vector<std::string>{"sm_90"}));
  // ... and it is in the registry remote.
  registry::Client remote({.url = m_registry->url("team/artifacts")}, registry::make_curl_transport());
  auto tags = remote.list_tags();
  ASSERT_TRUE(tags) << tags.error().message;
  EXPECT_NE(std::ranges::find(*tags, follows.outcome.pushed), tags->end());

  // The others are left, each with why.
  const app::WatchPair& pinned = pair(first, "pinned");
  EXPECT_FALSE(pinned.decision.stale);
  EXPECT_EQ(pinned.outcome.action, app::WatchAction::none);
  EXPECT_NE(util::join(pinned.decision.declined, "\n").find("policy pinned takes no new toolkit"), std::string::npos);
  const app::WatchPair& capped = pair(first, "capped");
  EXPECT_FALSE(capped.decision.stale);
  EXPECT_NE(util::join(capped.decision.declined, "\n").find("outside the recipe's cuda range >=13.0,<13.0.2"),
            std::string::npos)
      << util::join(capped.decision.declined, "\n");
  EXPECT_EQ(sets_of("follows"), 2u);
  EXPECT_EQ(sets_of("pinned"), 1u);
  EXPECT_EQ(sets_of("capped"), 1u);

  // policy major took 13.6.0, which the tables do not know: its image was
  // probed, its nvcc is 13.0's, so it was refused and 13.0.2 taken instead;
  // both probes are kept by digest.
  const app::WatchPair& next = pair(first, "next");
  ASSERT_EQ(next.outcome.action, app::WatchAction::rebuilt) << text(first);
  EXPECT_EQ(next.decision.take->image, m_base + "13.0.2-devel-ubuntu24.04");
  EXPECT_NE(util::join(next.decision.declined, "\n")
                .find("CUDA 13.6.0 (registry 127.0.0.1:" + std::to_string(m_registry->port()) +
                      "/nvidia/cuda): its image's nvcc is 13.0.88 (probed), not CUDA 13.6"),
            std::string::npos)
      << text(first);
  EXPECT_EQ(next.outcome.probe,
            "nvcc 13.0.88: sm_75 sm_80 sm_86 sm_87 sm_88 sm_89 sm_90 sm_100 sm_103 sm_110 "
            "sm_120 sm_121");
  EXPECT_TRUE(next.outcome.table_differences.empty()) << util::join(next.outcome.table_differences, "\n");
  const auto probes = watch::read_probes(engine_service().dir / "cache" / "toolkit-probes.v1.json");
  EXPECT_NE(watch::find_probe(probes, tag_digest("13.6.0-devel-ubuntu24.04")), nullptr);
  EXPECT_NE(watch::find_probe(probes, digest_13_0_2), nullptr);

  // Nothing new: nothing done, and said.
  const app::WatchReport second = cycle();
  EXPECT_TRUE(std::ranges::none_of(second.pairs, [](const app::WatchPair& p) { return p.decision.stale; }))
      << text(second);
  EXPECT_NE(text(second).find("nothing to do: every recipe x tier is up to date"), std::string::npos) << text(second);
  EXPECT_EQ(sets_of("follows"), 2u);
}

TEST_F(WatchRebuild, AMovedBaseIsSkippedUnderAnotherLockAndACancelStoresNothing) {
  write_config(false);
  build_in_13_0_1();
  ASSERT_EQ(cycle().exit_code(), util::ExitCode::ok);  // follows -> 13.0.2
  ASSERT_EQ(sets_of("follows"), 2u);

  // 13.0.2 rebuilt under its tag.
  const std::string old_digest = tag_digest("13.0.2-devel-ubuntu24.04");
  push_cuda_image("13.0.2-devel-ubuntu24.04", "13.0.2 rebuilt");
  const std::string moved = tag_digest("13.0.2-devel-ubuntu24.04");
  ASSERT_NE(moved, old_digest);

  // Another watcher holds the pair: skipped, and who holds it is said.
  {
    const util::FileLock held(m_store / "watch.v1" / "locks" / "follows--h.lock", util::FileLock::NoWait{});
    ASSERT_TRUE(held.held());
    const app::WatchReport locked = cycle();
    const app::WatchPair& follows = pair(locked, "follows");
    ASSERT_TRUE(follows.decision.stale);
    EXPECT_EQ(follows.decision.reason, "base image moved: " + m_base + "13.0.2-devel-ubuntu24.04 " +
                                           old_digest.substr(7, 12) + " -> " + moved.substr(7, 12));
    EXPECT_EQ(follows.outcome.action, app::WatchAction::locked);
    EXPECT_EQ(follows.outcome.detail,
              "another watcher (pid " + std::to_string(::getpid()) + ") is rebuilding follows/h; skipped");
    EXPECT_EQ(sets_of("follows"), 2u);
  }

  // A signal while the build runs: cancelled, nothing stored.
  engine::CancelFlag cancel;
  WatchedOutput hook([&](const std::string& seen) {
    if (seen.find("The CUDA compiler identification") != std::string::npos) cancel.request();
  });
  std::ostream hooked(&hook);
  const app::WatchReport stopped = cycle(hooked, &cancel);
  EXPECT_EQ(pair(stopped, "follows").outcome.action, app::WatchAction::cancelled) << text(stopped);
  EXPECT_EQ(sets_of("follows"), 2u);

  // The next cycle builds it.
  const app::WatchReport redone = cycle();
  const app::WatchPair& follows = pair(redone, "follows");
  ASSERT_EQ(follows.outcome.action, app::WatchAction::rebuilt) << text(redone);
  EXPECT_EQ(manifest(*follows.outcome.set).image_digest, moved);
  EXPECT_EQ(sets_of("follows"), 3u);

  // Two watcher processes at once, on another moved base: one set more, not two.
  push_cuda_image("13.0.2-devel-ubuntu24.04", "13.0.2 rebuilt again");
  const std::string cli = std::string(ORC_BINARY) + " watch --once --engine docker -f " + m_config.string();
  const auto both = run_process({"sh", "-c",
                                 "ORCHESTRATE_CACHE_DIR=\"$1\"; export ORCHESTRATE_CACHE_DIR; $2 >\"$3/a.out\" 2>&1 & "
                                 "$2 >\"$3/b.out\" 2>&1 & wait; cat \"$3/a.out\" \"$3/b.out\"",
                                 "sh", m_store.string(), cli, m_dir.path().string()});
  std::cout << both.output;
  EXPECT_EQ(sets_of("follows"), 4u) << both.output;
  std::size_t rebuilt_lines = 0;
  for (std::size_t at = both.output.find("    rebuilt: "); at != std::string::npos;
       at = both.output.find("    rebuilt: ", at + 1))
    ++rebuilt_lines;
  EXPECT_EQ(rebuilt_lines, 1u) << both.output;
}

// The image-catalog feed end to end. The archive's index is the one the
// image is made from: bookworm main's Packages.xz, downloaded from the
// host's mirror and served from 127.0.0.1. With the image's record as the
// index has it, a cycle has nothing to do. The record is then set back to
// the g++ of before a Debian update (what a record says when the archive
// moved after the image was made): the cycle makes host-bookworm again from
// the mirror (debootstrap, one to three minutes), finds in it what the
// index lists, and rebuilds the set built in it, with a manifest that says
// why; the next cycle does nothing.
TEST_F(WatchRebuild, ADebianArchiveUpdateMakesTheImageAgainAndRebuildsWhatWasBuiltInIt) {
  const auto mirror = imaging::debian_mirror();
  if (!mirror) GTEST_SKIP() << "no Debian mirror in the host's apt sources (ORCHESTRATE_DEBIAN_MIRROR)";
  const fs::path www = m_dir.path() / "www";
  const fs::path index = www / "debian/dists/bookworm/main/binary-amd64/Packages.xz";
  fs::create_directories(index.parent_path());
  const auto fetched =
      run_process({"curl", "-sSf", "-o", index.string(), *mirror + "/dists/bookworm/main/binary-amd64/Packages.xz"});
  if (fetched.exit_code != 0) GTEST_SKIP() << "the mirror's bookworm index could not be read: " << fetched.output;
  HttpServer server(HttpServer::Mode::serve_directory, www, m_dir.path() / "port");
  ASSERT_NE(server.port(), 0) << "http.server did not start";
  // Where the watcher finds images/offline/ to make the image again.
  ::setenv("ORCHESTRATE_IMAGES_DIR", (fs::path(ORC_SOURCE_DIR) / "images").c_str(), 1);
  m_recipes = 1;
  std::ofstream(m_config) << "toolkits: [\"13.0\"]\ntiers:\n  h:\n    gpus: [H100]\nwatch:\n  debian:\n"
                          << "    mirror: http://127.0.0.1:" << server.port() << "/debian\n"
                          << "    images: [host-bookworm]\nrecipes:\n"
                          << recipe("local", "");
  // The first set, as `orchestrate build` makes it: the plan takes 13.0,
  // the host's toolkit, so host-bookworm with /usr/local/cuda mounted.
  const auto first = app::build(app::BuildRequest{.config = m_config,
                                                  .tiers = {"h"},
                                                  .recipes = {},
                                                  .engine = engine::EngineKind::docker,
                                                  .jobs = 2,
                                                  .explain = false,
                                                  .store_root = m_store},
                                std::cout);
  ASSERT_EQ(first.builds.size(), 1u);
  ASSERT_EQ(first.builds[0].status, app::BuildStatus::built) << util::join(first.builds[0].errors, "\n");
  const cache::Manifest built = manifest(*first.builds[0].manifest);
  ASSERT_EQ(built.image, "orchestrate/cuda:host-bookworm");

  const fs::path state = site::image_state_path();
  auto record = site::find_built_image("orchestrate/cuda:host-bookworm", state);
  ASSERT_TRUE(record);
  // A host-mount image's digest is its ID and the host's toolkit.
  ASSERT_EQ(built.image_digest, record->id + " + host cuda 13.0.88");
  // The record as the index has it now (the suite's image may come from a
  // rootfs tar cached before the archive last moved).
  const auto offers =
      watch::debian_feed("http://127.0.0.1:" + std::to_string(server.port()) + "/debian",
                         {watch::WatchedImage{.name = "host-bookworm",
                                              .reference = "orchestrate/cuda:host-bookworm",
                                              .suite = "bookworm",
                                              .components = {"main"},
                                              .packages = {"g++", "cmake", "make", "ninja-build", "python3"}}},
                         registry::make_curl_transport())
          ->poll();
  ASSERT_TRUE(offers) << offers.error();
  const std::vector<std::string> now = offers->front().packages;
  ASSERT_EQ(now.size(), 5u);
  ASSERT_TRUE(now.front().starts_with("g++=")) << now.front();
  record->packages = now;
  site::save_image_record(state, *record);
  const app::WatchReport quiet = cycle();
  ASSERT_EQ(quiet.feeds.size(), 1u);
  EXPECT_TRUE(quiet.feeds[0].ok) << quiet.feeds[0].error;
  EXPECT_FALSE(pair(quiet, "local").decision.stale) << text(quiet);
  EXPECT_TRUE(pair(quiet, "local").decision.declined.empty()) << text(quiet);

  // Made before the archive's g++ update.
  const std::string before = "g++=4:12.2.0-2";
  record->packages.front() = before;
  site::save_image_record(state, *record);
  const app::WatchReport moved = cycle();
  const app::WatchPair& local = pair(moved, "local");
  ASSERT_TRUE(local.decision.stale) << text(moved);
  EXPECT_TRUE(local.decision.make_image);
  EXPECT_EQ(local.decision.reason, "bookworm main: g++ 4:12.2.0-2 -> " + now.front().substr(4) +
                                       "; orchestrate/cuda:host-bookworm is made again");
  ASSERT_EQ(local.outcome.action, app::WatchAction::rebuilt) << text(moved);
  const auto remade = site::find_built_image("orchestrate/cuda:host-bookworm", state);
  ASSERT_TRUE(remade);
  EXPECT_NE(remade->id, record->id);
  std::vector<std::string> made_from = remade->packages;
  std::vector<std::string> listed = now;
  std::ranges::sort(made_from);
  std::ranges::sort(listed);
  EXPECT_EQ(made_from, listed);
  EXPECT_NE(local.outcome.image_made.find(remade->id), std::string::npos) << local.outcome.image_made;
  const cache::Manifest rebuilt = manifest(*local.outcome.set);
  EXPECT_EQ(rebuilt.image, "orchestrate/cuda:host-bookworm");
  EXPECT_EQ(rebuilt.image_digest, remade->id + " + host cuda 13.0.88");
  ASSERT_TRUE(rebuilt.trigger);
  EXPECT_EQ(rebuilt.trigger->reason, local.decision.reason);
  EXPECT_EQ(rebuilt.trigger->from_set, *first.builds[0].manifest);
  EXPECT_EQ(rebuilt.trigger->to_image_digest, remade->id);
  EXPECT_EQ(sets_of("local"), 2u);

  // Idempotent.
  const app::WatchReport again = cycle();
  EXPECT_FALSE(pair(again, "local").decision.stale) << text(again);
  EXPECT_EQ(sets_of("local"), 2u);
  ::unsetenv("ORCHESTRATE_IMAGES_DIR");
}

}  // namespace
}  // namespace orc::integration
