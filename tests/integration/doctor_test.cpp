// `orchestrate doctor`'s site checks (issue 29) with the real binary against
// real services this suite starts and stops: a dockerd
// (scripts/start-dockerd.sh) holding the host-mount build image made by
// `orchestrate images build host-bookworm`, a docker-registry behind
// htpasswd basic auth (scripts/start-registry.sh --user), and a one-host
// Slurm cluster (scripts/start-slurm.sh). First a machine with nothing
// configured (warnings and skips, exit 0), then with everything (every
// check ok, exit 0), then each outside system wrong: credentials refused or
// missing, a registry port nobody listens on, an engine socket nobody
// answers on, a Slurm controller that is not there, a tier whose partition
// Slurm does not have (each a failed check, exit 1, never exit 3, and the
// password said nowhere). The image takes debootstrap and apt the first time
// (a few minutes); its rootfs tar is kept (--keep-rootfs) in fixtures/images
// of the build tree, which the build suites share, so one run makes it once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/integration/process.hpp"
#include "tests/integration/registry_process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* k_password = "d0ct0r-s3cret-pw";

std::string script(const char* name) { return std::string(ORC_SOURCE_DIR) + "/scripts/" + name; }

std::string last_line(const std::string& output) {
  std::string text = output;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

class DoctorSite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) {
      s_skip = "dockerd, slurmd and munged need root (run the suite as root, as CI does)";
      return;
    }
    if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) {
      s_skip = "no CUDA toolkit at /usr/local/cuda: the host-mount image and the plan use it";
      return;
    }
    s_dir = std::make_unique<TempDir>("orc-doctor-it");
    const fs::path dir = s_dir->path();
    const auto engine = run_process({script("start-dockerd.sh"), (dir / "engine").string()});
    if (engine.exit_code != 0) return fail("start-dockerd.sh: " + engine.output);
    s_socket = last_line(engine.output);
    const auto slurm = run_process({script("start-slurm.sh"), (dir / "slurm").string()});
    if (slurm.exit_code != 0) return fail("start-slurm.sh: " + slurm.output);
    s_registry = std::make_unique<RegistryProcess>(dir / "registry", std::string("ci:") + k_password);
    if (!s_registry->error().empty()) return fail(s_registry->error());

    // The site a build node has: keys, the image its tier's plan uses.
    fs::create_directories(dir / "site" / "src");
    std::ofstream(dir / "site" / "src" / "k.cu") << "__global__ void k() {}\n";
    const auto key = orchestrate({"key", "generate"}, base_env(), dir / "site");
    if (key.exit_code != 0) return fail("key generate: " + key.output);
    const auto image = orchestrate(
        {"images", "build", "host-bookworm", "--engine-socket", s_socket.string(), "--images-dir",
         std::string(ORC_SOURCE_DIR) + "/images", "--cache", (fs::path(ORC_FIXTURES_DIR) / "images").string(),
         "--keep-rootfs"},
        base_env(), dir / "site");
    if (image.exit_code != 0) return fail("images build host-bookworm: " + image.output);
  }

  static void TearDownTestSuite() {
    if (!s_dir) return;
    const fs::path dir = s_dir->path();
    s_registry.reset();
    run_process({script("stop-slurm.sh"), (dir / "slurm").string()});
    run_process({script("stop-dockerd.sh"), (dir / "engine").string()});
    s_dir.reset();
  }

  void SetUp() override {
    if (!s_skip.empty()) GTEST_SKIP() << s_skip;
    ASSERT_TRUE(s_error.empty()) << s_error;
  }

  static void fail(const std::string& why) { s_error = why; }

  // The variables every run gets: this machine's PATH, and the store, keys
  // and image records of the suite's site.
  static std::vector<std::string> base_env() {
    const fs::path dir = s_dir->path();
    return {"PATH=" + env_or("PATH", "/usr/bin:/bin"), "HOME=" + (dir / "home").string(),
            "ORCHESTRATE_CACHE_DIR=" + (dir / "cache").string(), "ORCHESTRATE_KEYS_DIR=" + (dir / "keys").string()};
  }
  // Everything configured: the engine, Slurm, the remote with its credentials.
  static std::vector<std::string> site_env(const std::string& password = k_password) {
    auto env = base_env();
    env.push_back("DOCKER_HOST=unix://" + s_socket.string());
    env.push_back("SLURM_CONF=" + (s_dir->path() / "slurm" / "slurm.conf").string());
    env.push_back("ORCHESTRATE_REMOTE=http://ci:" + password + "@127.0.0.1:" + std::to_string(s_registry->port()) +
                  "/team/sets");
    return env;
  }

  static ProcessResult orchestrate(const std::vector<std::string>& args, const std::vector<std::string>& env,
                                   const fs::path& cwd) {
    std::vector<std::string> argv = {"/usr/bin/env", "-i"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(ORC_BINARY);
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, cwd);
  }

  // `doctor --json` in `cwd`: its exit code and every site result by
  // "check subject".
  struct Doctor {
    int exit_code = -1;
    std::map<std::string, json> checks;
    std::string output;
    std::string status(const std::string& key) const {
      const auto it = checks.find(key);
      return it == checks.end() ? "(no result " + key + ")" : it->second["status"].get<std::string>();
    }
  };
  static Doctor doctor(const std::vector<std::string>& env, const fs::path& cwd, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"doctor", "--no-python", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto ran = orchestrate(args, env, cwd);
    Doctor d{.exit_code = ran.exit_code, .checks = {}, .output = ran.output};
    // stderr is merged: the JSON document is the object that starts a line.
    const auto start = ran.output.find("{\n");
    const auto j = json::parse(ran.output.substr(start == std::string::npos ? 0 : start), nullptr, false);
    if (j.is_discarded()) return d;
    for (const auto& c : j["site"]["checks"]) {
      std::string key = c["check"].get<std::string>();
      if (c["subject"].is_string()) key += " " + c["subject"].get<std::string>();
      d.checks[key] = c;
    }
    return d;
  }

  // The site's configuration: one Hopper tier on Slurm's hopper partition,
  // a CMake recipe, CUDA 13.0 (the host's, so the host-mount image).
  static fs::path write_site(const std::string& partition = "hopper") {
    const fs::path site = s_dir->path() / "site";
    std::ofstream(site / "orchestrate.yaml") << "toolkits: [\"13.0\"]\n"
                                                "tiers:\n"
                                                "  hopper:\n"
                                                "    gpus: [\"H100\"]\n"
                                                "    driver: \"580.65.06\"\n"
                                                "    slurm: {partition: "
                                             << partition
                                             << ", constraint: sm_90}\n"
                                                "recipes:\n"
                                                "  - name: kernel\n"
                                                "    framework: nvcc\n"
                                                "    source: {path: src}\n"
                                                "    tiers: [hopper]\n"
                                                "    build: [[nvcc, -c, k.cu]]\n"
                                                "    artifacts: [\"k.o\"]\n";
    return site;
  }

  static inline std::string s_skip, s_error;
  static inline std::unique_ptr<TempDir> s_dir;
  static inline std::unique_ptr<RegistryProcess> s_registry;
  static inline fs::path s_socket;
};

TEST_F(DoctorSite, NothingConfiguredWarnsAndSkipsAndExitsZero) {
  if (fs::exists("/var/run/docker.sock") || fs::exists("/etc/slurm/slurm.conf"))
    GTEST_SKIP() << "this machine has a system engine socket or Slurm configuration doctor would read";
  const fs::path empty = s_dir->path() / "empty";
  fs::create_directories(empty);
  auto env = base_env();
  env.back() = "ORCHESTRATE_KEYS_DIR=" + (s_dir->path() / "no-keys").string();
  const Doctor d = doctor(env, empty);
  EXPECT_EQ(d.exit_code, 0) << d.output;
  EXPECT_EQ(d.status("config"), "warn") << d.output;
  EXPECT_EQ(d.status("engine host"), "warn") << d.output;
  EXPECT_EQ(d.status("toolkit"), "skipped");
  EXPECT_EQ(d.status("image"), "skipped");
  EXPECT_EQ(d.status("remote"), "skipped");
  EXPECT_EQ(d.status("signing-key " + (s_dir->path() / "no-keys").string()), "warn");
  EXPECT_EQ(d.status("slurm"), "skipped");
  for (const auto& [key, c] : d.checks) {
    EXPECT_NE(c["status"], "fail") << key;
    if (c["status"] == "warn") EXPECT_TRUE(c["fix"].is_string()) << key;
  }
  // The text says the same, with its counts.
  const auto text = orchestrate({"doctor", "--no-python"}, env, empty);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("site checks: 0 ok, 4 warnings, 0 failed, 4 skipped"), std::string::npos) << text.output;
}

TEST_F(DoctorSite, EverythingConfiguredIsEveryCheckOk) {
  const fs::path site = write_site();
  const Doctor d = doctor(site_env(), site);
  EXPECT_EQ(d.exit_code, 0) << d.output;
  for (const std::string& key : std::vector<std::string>{"config orchestrate.yaml", "engine " + s_socket.string(),
                                                         "toolkit hopper", "image hopper", "slurm hopper"})
    EXPECT_EQ(d.status(key), "ok") << key << "\n" << d.output;
  EXPECT_NE(d.checks.at("image hopper")["detail"].get<std::string>().find("orchestrate/cuda:host-bookworm"),
            std::string::npos);
  const std::string remote = "remote http://127.0.0.1:" + std::to_string(s_registry->port()) + "/team/sets";
  EXPECT_EQ(d.status(remote), "ok") << d.output;
  EXPECT_EQ(d.status("signing-key " + (s_dir->path() / "keys").string()), "ok");
  EXPECT_EQ(d.status("trusted-keys " + (s_dir->path() / "keys").string()), "ok");
  for (const auto& [key, c] : d.checks) EXPECT_EQ(c["status"], "ok") << key << ": " << c.dump();
  EXPECT_EQ(d.output.find(k_password), std::string::npos);
}

// The registry refuses a wrong password and wants one when none is given:
// failed checks (exit 1, not 3) that never say the password.
TEST_F(DoctorSite, RefusedOrMissingCredentialsFailWithoutBeingPrinted) {
  const fs::path site = write_site();
  const std::string remote = "remote http://127.0.0.1:" + std::to_string(s_registry->port()) + "/team/sets";
  const Doctor wrong = doctor(site_env("not-the-password"), site);
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_EQ(wrong.status(remote), "fail") << wrong.output;
  EXPECT_NE(wrong.checks.at(remote)["detail"].get<std::string>().find("refused the credentials"), std::string::npos)
      << wrong.output;
  EXPECT_EQ(wrong.output.find("not-the-password"), std::string::npos);
  const auto text = orchestrate({"doctor", "--no-python"}, site_env("not-the-password"), site);
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_EQ(text.output.find("not-the-password"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("[FAIL]  remote"), std::string::npos) << text.output;

  auto env = site_env();
  env.back() = "ORCHESTRATE_REMOTE=http://127.0.0.1:" + std::to_string(s_registry->port()) + "/team/sets";
  const Doctor none = doctor(env, site);
  EXPECT_EQ(none.exit_code, 1) << none.output;
  EXPECT_NE(none.checks.at(remote)["detail"].get<std::string>().find("wants credentials"), std::string::npos)
      << none.output;
}

// Each outside system gone at once: a registry port nobody listens on, an
// engine socket whose daemon is gone, a Slurm controller that is not there.
// Each is its own failed check, within the --timeout each is given.
TEST_F(DoctorSite, OutsideSystemsThatDoNotAnswerAreFailedChecks) {
  const fs::path site = write_site();
  const fs::path dir = s_dir->path();
  // A port that was free a moment ago.
  RegistryProcess gone(dir / "gone-registry");
  ASSERT_TRUE(gone.error().empty()) << gone.error();
  const int port = gone.port();
  gone.stop();
  // A socket file nobody listens on: a daemon killed without cleaning up.
  const fs::path dead_socket = dir / "dead.sock";
  ASSERT_EQ(run_process({"python3", "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])",
                         dead_socket.string()})
                .exit_code,
            0);
  // Slurm's configuration with the controller's port moved to one nobody
  // listens on.
  std::ifstream in(dir / "slurm" / "slurm.conf");
  std::ofstream out(dir / "dead-slurm.conf");
  for (std::string line; std::getline(in, line);)
    out << (line.starts_with("SlurmctldPort=") ? "SlurmctldPort=" + std::to_string(port) : line) << "\n";
  out.close();

  auto env = base_env();
  env.push_back("DOCKER_HOST=unix://" + dead_socket.string());
  env.push_back("SLURM_CONF=" + (dir / "dead-slurm.conf").string());
  env.push_back("ORCHESTRATE_REMOTE=http://ci:" + std::string(k_password) + "@127.0.0.1:" + std::to_string(port) +
                "/team/sets");
  const Doctor d = doctor(env, site, {"--timeout", "3"});
  EXPECT_EQ(d.exit_code, 1) << d.output;
  EXPECT_EQ(d.status("engine " + dead_socket.string()), "fail") << d.output;
  EXPECT_EQ(d.status("image"), "skipped") << d.output;
  EXPECT_EQ(d.status("remote http://127.0.0.1:" + std::to_string(port) + "/team/sets"), "fail") << d.output;
  EXPECT_EQ(d.status("slurm"), "fail") << d.output;
  EXPECT_EQ(d.output.find(k_password), std::string::npos);
}

TEST_F(DoctorSite, ATierWhosePartitionSlurmLacksFails) {
  const fs::path site = write_site("volta");
  const Doctor d = doctor(site_env(), site);
  EXPECT_EQ(d.exit_code, 1) << d.output;
  EXPECT_EQ(d.status("slurm hopper"), "fail") << d.output;
  EXPECT_NE(d.checks.at("slurm hopper")["detail"].get<std::string>().find("partition volta"), std::string::npos);
  EXPECT_TRUE(d.checks.at("slurm hopper")["fix"].is_string());
}

}  // namespace
}  // namespace orc::integration
