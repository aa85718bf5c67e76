// The engine cases every engine integration binary runs (against dockerd,
// and against Podman's API service), through the real engine started by
// the binary's environment (engine_service.hpp). What they check is what a
// build would see: output, exit codes, mounts, files copied out, refusals,
// cleanup, and the failures users must be able to read.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "orchestrator/engine/docker_engine.hpp"
#include "tests/integration/engine_service.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {

EngineService& engine_service() {
  static EngineService service;
  return service;
}

std::string seconds_since(std::chrono::steady_clock::time_point start) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", s);
  return text;
}

void say(const std::string& line) { std::cout << "[  engine  ] " << line << std::endl; }

std::string script_path(const char* name) { return std::string(ORC_SOURCE_DIR) + "/scripts/" + name; }

std::string last_line(const std::string& output) {
  std::string text = output;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

void mount_tmpfs(const std::filesystem::path& dir) {
  if (::mount("orc-engine", dir.c_str(), "tmpfs", 0, "mode=0700") != 0)
    say("no tmpfs for the engine's storage (" + std::string(std::strerror(errno)) + "); using the disk");
}

void unmount_and_remove(const std::filesystem::path& dir) {
  const auto start = std::chrono::steady_clock::now();
  ::umount2(dir.c_str(), MNT_DETACH);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) say("could not remove " + dir.string() + ": " + ec.message());
  say("removed " + dir.string() + " in " + seconds_since(start) + " s");
}

void import_base_image(EngineService& s) {
  auto start = std::chrono::steady_clock::now();
  const ProcessResult made = run_process({script_path("make-base-image.sh"), ORC_FIXTURES_DIR});
  if (made.exit_code != 0) {
    s.skip_reason = "no base root file system (debootstrap from the host's mirror failed): " + made.output;
    say("skipping every case: " + s.skip_reason);
    return;
  }
  const std::filesystem::path tar = last_line(made.output);
  say("base rootfs tar " + tar.string() + " ready after " + seconds_since(start) + " s");

  auto engine = engine::DockerEngine::connect(s.socket);
  if (!engine) {
    s.setup_error = "connecting: " + engine.error().message;
    return;
  }
  say(std::string(engine->name()) + " " + engine->client().engine().version + ", speaking API " +
      engine->client().api().str());
  start = std::chrono::steady_clock::now();
  auto image = engine->import_image(tar, "orc/bookworm-minbase", "test");
  if (!image) {
    s.setup_error = image.error().message;
    return;
  }
  s.image = "orc/bookworm-minbase:test";
  say("imported " + s.image + " (" + image->id.substr(0, 19) + ", " + std::to_string(image->size >> 20) +
      " MiB) through the API in " + seconds_since(start) + " s");
}

namespace {

namespace fs = std::filesystem;
using namespace engine;
using namespace std::chrono_literals;

// Keeps what the container printed, and runs `on_output` on each chunk
// (to cancel or kill the engine once a container is known to be running).
struct Log final : LogSink {
  std::string out, err;
  std::function<void(const std::string& out_so_far)> on_output_hook;
  void on_output(OutputStream stream, std::string_view bytes) override {
    (stream == OutputStream::out ? out : err).append(bytes);
    if (on_output_hook) on_output_hook(out);
  }
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class EngineCase : public ::testing::Test {
 protected:
  void SetUp() override {
    const EngineService& s = engine_service();
    if (!s.skip_reason.empty()) GTEST_SKIP() << s.skip_reason;
    ASSERT_TRUE(s.setup_error.empty()) << s.setup_error;
    auto connected = DockerEngine::connect(s.socket, &m_cancel);
    ASSERT_TRUE(connected) << connected.error().message;
    m_engine.emplace(std::move(*connected));
    m_label_value = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  // Every case, whatever its path, leaves no container behind.
  void TearDown() override {
    if (!m_engine || !m_check_leftovers) return;
    auto left = m_engine->client().list_containers("orc.test=" + m_label_value);
    ASSERT_TRUE(left) << left.error().message;
    EXPECT_TRUE(left->empty()) << left->size() << " container(s) left, the first " << left->front().id;
  }

  BuildSpec spec(std::vector<std::string> argv) {
    return BuildSpec{.image = engine_service().image,
                     .argv = std::move(argv),
                     .limits = {.nofile = 1024, .nproc = 1024},
                     .labels = {{"orc.test", m_label_value}}};
  }

  RunResult run_ok(const BuildSpec& s, Log& log) {
    const auto start = std::chrono::steady_clock::now();
    auto result = m_engine->run(s, log);
    if (!result) {
      ADD_FAILURE() << result.error().message;
      return {};
    }
    std::cout << "[  engine  ] container ran in " << seconds_since(start) << " s\n";
    return *result;
  }

  CancelFlag m_cancel;
  std::optional<DockerEngine> m_engine;
  std::string m_label_value;
  bool m_check_leftovers = true;
  TempDir m_scratch{"orc-engine-case"};
};

TEST_F(EngineCase, EchoStreamsStdoutAndStderrAndExitsZero) {
  Log log;
  const RunResult r = run_ok(spec({"/bin/sh", "-c", "echo hello; echo oops >&2"}), log);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(log.out, "hello\n");
  EXPECT_EQ(log.err, "oops\n");
  EXPECT_TRUE(r.removed);
}

TEST_F(EngineCase, FailingCommandGivesItsExitCode) {
  Log log;
  EXPECT_EQ(run_ok(spec({"/bin/sh", "-c", "echo about to fail; exit 7"}), log).exit_code, 7);
  EXPECT_EQ(log.out, "about to fail\n");
}

TEST_F(EngineCase, TtyOutputIsRawAndMerged) {
  BuildSpec s = spec({"/bin/sh", "-c", "echo to-out; echo to-err >&2"});
  s.tty = true;
  Log log;
  EXPECT_EQ(run_ok(s, log).exit_code, 0);
  EXPECT_EQ(log.out, "to-out\r\nto-err\r\n");
  EXPECT_EQ(log.err, "");
}

// The toolkit-from-the-host image: /usr/local/cuda bind-mounted read-only,
// nvcc runs inside, and the container has no network but loopback.
TEST_F(EngineCase, EnvReadOnlyCudaMountAndNoNetwork) {
  if (!fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda on this host";
  BuildSpec s = spec({"/bin/sh", "-c",
                      "echo \"FOO=$FOO\"; /usr/local/cuda/bin/nvcc --version | tail -n 2; ls /sys/class/net; "
                      "touch /usr/local/cuda/x 2>/dev/null && echo WRITABLE || echo read-only"});
  s.env = {{"FOO", "bar baz"}};
  s.mounts = {{.host = "/usr/local/cuda", .container = "/usr/local/cuda"}};
  Log log;
  EXPECT_EQ(run_ok(s, log).exit_code, 0) << log.err;
  EXPECT_NE(log.out.find("FOO=bar baz\n"), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("Cuda compilation tools"), std::string::npos) << log.out << log.err;
  EXPECT_NE(log.out.find("\nlo\nread-only\n"), std::string::npos) << log.out;
}

TEST_F(EngineCase, WorkingDirUserAndLimits) {
  BuildSpec s = spec({"/bin/sh", "-c", "pwd; id -u; grep -E 'open files|processes' /proc/self/limits"});
  s.working_dir = "/tmp";
  s.user = "65534:65534";
  s.limits = {.nofile = 512, .nproc = 256};
  Log log;
  EXPECT_EQ(run_ok(s, log).exit_code, 0) << log.err;
  EXPECT_TRUE(log.out.starts_with("/tmp\n65534\n")) << log.out;
  EXPECT_NE(log.out.find("Max open files            512                  512"), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("Max processes             256                  256"), std::string::npos) << log.out;
}

TEST_F(EngineCase, CopiesADirectoryOut) {
  BuildSpec s = spec({"/bin/sh", "-c",
                      "mkdir -p /build/out/sub && echo kernel > /build/out/k.bin && echo deep > /build/out/sub/d.txt "
                      "&& ln -s sub/d.txt /build/out/link"});
  s.outputs = {{"/build/out", m_scratch.path() / "dest"}};
  Log log;
  const RunResult r = run_ok(s, log);
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.outputs.size(), 1u);
  ASSERT_TRUE(r.outputs[0]) << r.outputs[0].error().message;
  EXPECT_EQ(r.outputs[0]->files, 2u);
  EXPECT_EQ(r.outputs[0]->symlinks, 1u);
  EXPECT_EQ(read_file(m_scratch.path() / "dest/out/k.bin"), "kernel\n");
  EXPECT_EQ(read_file(m_scratch.path() / "dest/out/link"), "deep\n");
}

TEST_F(EngineCase, RefusesArchivesWithLinksOutOfTheDestination) {
  BuildSpec s = spec({"/bin/sh", "-c", "mkdir -p /out && echo x > /out/f && ln -s /etc /out/etc"});
  s.outputs = {{"/out", m_scratch.path() / "abs"}};
  Log log;
  RunResult r = run_ok(s, log);
  ASSERT_EQ(r.outputs.size(), 1u);
  ASSERT_FALSE(r.outputs[0]);
  EXPECT_EQ(r.outputs[0].error().kind, ErrorKind::unsafe_archive);
  EXPECT_NE(r.outputs[0].error().message.find("entry 'out/etc' is a symlink to an absolute path ('/etc')"),
            std::string::npos)
      << r.outputs[0].error().message;
  EXPECT_FALSE(fs::exists(m_scratch.path() / "abs/out/f")) << "a refused archive must write nothing";

  s = spec({"/bin/sh", "-c", "mkdir -p /out && ln -s ../../../.. /out/up"});
  s.outputs = {{"/out", m_scratch.path() / "rel"}};
  r = run_ok(s, log);
  ASSERT_EQ(r.outputs.size(), 1u);
  ASSERT_FALSE(r.outputs[0]);
  EXPECT_NE(r.outputs[0].error().message.find("that resolves outside the destination"), std::string::npos);
}

TEST_F(EngineCase, MissingPathToCopyIsNotFound) {
  BuildSpec s = spec({"true"});
  s.outputs = {{"/no/such/dir", m_scratch.path() / "dest"}};
  Log log;
  const RunResult r = run_ok(s, log);
  ASSERT_EQ(r.outputs.size(), 1u);
  ASSERT_FALSE(r.outputs[0]);
  EXPECT_EQ(r.outputs[0].error().kind, ErrorKind::not_found) << r.outputs[0].error().message;
}

TEST_F(EngineCase, BadExecutableFailsToStartAndIsRemoved) {
  Log log;
  auto result = m_engine->run(spec({"/nonexistent"}), log);
  ASSERT_FALSE(result);
  EXPECT_TRUE(result.error().message.starts_with("starting container ")) << result.error().message;
  EXPECT_NE(result.error().message.find("/nonexistent"), std::string::npos) << result.error().message;
}

TEST_F(EngineCase, MissingImageIsAClearError) {
  BuildSpec s = spec({"true"});
  s.image = "orc/no-such-image:1";
  Log log;
  auto result = m_engine->run(s, log);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::not_found);
  EXPECT_TRUE(result.error().message.starts_with(
      "image 'orc/no-such-image:1' is not in the engine; import or build it first ("))
      << result.error().message;
}

// A real SIGTERM, delivered while the container runs, through the handler a
// command installs: the run stops, kills and removes its container.
TEST_F(EngineCase, SignalCancelsKillsAndRemoves) {
  ScopedSignalCancel handlers(m_cancel);
  Log log;
  bool signalled = false;
  log.on_output_hook = [&](const std::string& out) {
    if (!signalled && out.find("started") != std::string::npos) {
      signalled = true;
      ::kill(::getpid(), SIGTERM);
    }
  };
  const auto start = std::chrono::steady_clock::now();
  auto result = m_engine->run(spec({"/bin/sh", "-c", "echo started; exec sleep 300"}), log);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::cancelled) << result.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  std::cout << "[  engine  ] cancelled and removed in " << seconds_since(start) << " s\n";
}

TEST_F(EngineCase, BuildsAnImageAndReportsAFailedStep) {
  fs::create_directories(m_scratch.path() / "ctx");
  std::ofstream(m_scratch.path() / "ctx/Dockerfile")
      << "FROM " << engine_service().image << "\nCOPY hello.txt /hello.txt\nRUN cat /hello.txt\n";
  std::ofstream(m_scratch.path() / "ctx/hello.txt") << "from the context\n";
  Log log;
  auto built = m_engine->build_image(m_scratch.path() / "ctx", "orc/built:test", {}, log);
  ASSERT_TRUE(built) << built.error().message << "\n" << log.out;
  EXPECT_TRUE(built->id.starts_with("sha256:"));
  EXPECT_NE(log.out.find("from the context"), std::string::npos) << log.out;

  std::ofstream(m_scratch.path() / "ctx/Dockerfile") << "FROM " << engine_service().image << "\nRUN exit 9\n";
  auto failed = m_engine->build_image(m_scratch.path() / "ctx", "orc/failed:test", {}, log);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().kind, ErrorKind::build_failed);
  EXPECT_NE(failed.error().message.find("exit 9"), std::string::npos) << failed.error().message;
}

TEST_F(EngineCase, SocketThatDoesNotExist) {
  auto engine = DockerEngine::connect(m_scratch.path() / "absent.sock");
  ASSERT_FALSE(engine);
  EXPECT_EQ(engine.error().kind, ErrorKind::socket_missing);
  EXPECT_EQ(engine.error().message, "connecting to the container engine: socket missing: no engine socket at " +
                                        (m_scratch.path() / "absent.sock").string());
}

// The engine's real socket (a hard link to it, so beside it on the same
// file system), reached through a directory this user may not search. Root
// passes every permission check, so the attempt runs on a thread with an
// unprivileged file-system UID (a per-thread setting).
TEST_F(EngineCase, SocketWithoutPermission) {
  const fs::path denied = engine_service().socket.parent_path() / "denied";
  fs::create_directories(denied);
  fs::create_hard_link(engine_service().socket, denied / "engine.sock");
  fs::permissions(denied, fs::perms::none);
  std::expected<DockerEngine, Error> engine = std::unexpected(Error{});
  std::thread attempt([&] {
    ::setfsuid(65534);
    engine = DockerEngine::connect(denied / "engine.sock");
    ::setfsuid(0);
  });
  attempt.join();
  fs::permissions(denied, fs::perms::owner_all);
  fs::remove_all(denied);
  ASSERT_FALSE(engine);
  EXPECT_EQ(engine.error().kind, ErrorKind::permission_denied);
  EXPECT_EQ(engine.error().message, "connecting to the container engine: permission denied: " +
                                        (denied / "engine.sock").string() + ": permission denied");
}

// Last (the engine does not come back): the daemon is killed while a
// container runs; the run reports that the engine died.
TEST_F(EngineCase, ZzEngineDyingMidRun) {
  m_check_leftovers = false;
  const pid_t pid = engine_service().pid;
  ASSERT_GT(pid, 0);
  Log log;
  bool killed = false;
  log.on_output_hook = [&](const std::string& out) {
    if (!killed && out.find("started") != std::string::npos) {
      killed = true;
      ::kill(pid, SIGKILL);
    }
  };
  auto result = m_engine->run(spec({"/bin/sh", "-c", "echo started; exec sleep 300"}), log);
  ASSERT_TRUE(killed) << log.out << log.err;
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::engine_died) << result.error().message;
  EXPECT_TRUE(result.error().engine_unreachable());
  EXPECT_NE(result.error().message.find("engine died"), std::string::npos) << result.error().message;
  std::cout << "[  engine  ] " << result.error().message << "\n";
}

}  // namespace
}  // namespace orc::integration
