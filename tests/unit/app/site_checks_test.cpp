// doctor's site checks (issue 29) on what a unit test can make itself: a
// scratch directory with or without a configuration, keys made by the real
// key code, unix sockets nobody answers on, a TCP port nobody listens on, a
// Slurm configuration whose controller is not there. The real engine,
// registry and Slurm are tests/integration/doctor_test.cpp's.
#include "orchestrator/app/doctor/site_checks.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "orchestrator/app/doctor/doctor.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/cli/render.hpp"
#include "tests/unit/cli/cli_fixture.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;
using cli::testing::ScopedEnv;

// A scratch directory as the working directory, and an environment that
// names no configuration, remote, engine or Slurm of this machine.
class SiteChecks : public cli::testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    m_old_cwd = fs::current_path();
    fs::current_path(m_dir);
    for (const char* name : {"ORCHESTRATE_CONFIG", "ORCHESTRATE_REMOTE", "SLURM_CONF", "DOCKER_HOST", "CONTAINER_HOST"})
      m_env.push_back(std::make_unique<ScopedEnv>(name, ""));
    for (const char* name : {"ORCHESTRATE_CONFIG", "ORCHESTRATE_REMOTE", "SLURM_CONF", "DOCKER_HOST", "CONTAINER_HOST"})
      ::unsetenv(name);
    m_env.push_back(std::make_unique<ScopedEnv>("ORCHESTRATE_KEYS_DIR", (m_dir / "keys").string()));
    m_env.push_back(std::make_unique<ScopedEnv>("XDG_RUNTIME_DIR", (m_dir / "run").string()));
  }
  void TearDown() override {
    fs::current_path(m_old_cwd);
    m_env.clear();
    CliTest::TearDown();
  }

  static const CheckResult* find(const SiteReport& r, CheckId id, const std::string& subject = "*") {
    for (const auto& c : r.checks)
      if (c.id == id && (subject == "*" || c.subject == subject)) return &c;
    return nullptr;
  }
  static std::string dump(const SiteReport& r) {
    DoctorReport report;
    report.site = r;
    return cli::render(report, cli::Format::text);
  }

  fs::path m_old_cwd;
  std::vector<std::unique_ptr<ScopedEnv>> m_env;
};

TEST(SiteCheckTable, EveryCheckHasANameWhatItChecksAndAFixOnce) {
  std::set<std::string_view> names;
  for (const auto& c : check_table()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.checks.empty()) << c.name;
    EXPECT_FALSE(c.fix.empty()) << c.name;
    EXPECT_EQ(&check_info(c.id), &c);
  }
  EXPECT_EQ(names.size(), 8u);
}

TEST_F(SiteChecks, NothingConfiguredWarnsAndSkipsButFailsNothing) {
  if (fs::exists("/var/run/docker.sock") || fs::exists("/run/podman/podman.sock"))
    GTEST_SKIP() << "this machine has an engine socket, which doctor would ask";
  if (fs::exists("/etc/slurm/slurm.conf")) GTEST_SKIP() << "this machine has /etc/slurm/slurm.conf";
  const SiteRequest request = site_request_for("");
  EXPECT_TRUE(request.config.empty());
  const SiteReport r = check_site(request);
  EXPECT_EQ(r.exit_code(), util::ExitCode::ok) << dump(r);
  EXPECT_EQ(find(r, CheckId::config)->status, CheckStatus::warn);
  EXPECT_EQ(find(r, CheckId::engine)->status, CheckStatus::warn);
  EXPECT_NE(find(r, CheckId::engine)->detail.find("no container engine socket found"), std::string::npos);
  EXPECT_EQ(find(r, CheckId::toolkit)->status, CheckStatus::skipped);
  EXPECT_EQ(find(r, CheckId::image)->status, CheckStatus::skipped);
  EXPECT_EQ(find(r, CheckId::remote)->status, CheckStatus::skipped);
  EXPECT_EQ(find(r, CheckId::signing_key)->status, CheckStatus::warn);
  EXPECT_EQ(find(r, CheckId::trusted_keys)->status, CheckStatus::warn);
  EXPECT_EQ(find(r, CheckId::slurm)->status, CheckStatus::skipped);
  // Read, never made: doctor leaves no key behind.
  EXPECT_FALSE(fs::exists(m_dir / "keys" / "signing.pem"));
  // Every warning says how to fix it; the table's order holds.
  for (const auto& c : r.checks)
    if (c.status == CheckStatus::warn) EXPECT_FALSE(c.fix.empty()) << check_info(c.id).name;
  EXPECT_TRUE(std::ranges::is_sorted(r.checks, {}, [](const CheckResult& c) { return static_cast<int>(c.id); }));
}

TEST_F(SiteChecks, AnInvalidConfigurationIsAFailedCheckNamingItsLine) {
  write("orchestrate.yaml", "tiers:\n  t:\n    gpus: [\"H100\"]\n    archs: all\nrecipes: []\n");
  const SiteRequest request = site_request_for("");
  EXPECT_EQ(request.config, "orchestrate.yaml");
  const SiteReport r = check_site(request);
  EXPECT_EQ(r.exit_code(), util::ExitCode::check_failed);
  const CheckResult* config = find(r, CheckId::config);
  EXPECT_EQ(config->status, CheckStatus::fail);
  EXPECT_NE(config->detail.find("orchestrate.yaml:4:5"), std::string::npos) << config->detail;
  EXPECT_EQ(config->detail.find("orchestrate: error:"), std::string::npos) << config->detail;
  EXPECT_EQ(find(r, CheckId::toolkit)->status, CheckStatus::skipped);
}

TEST_F(SiteChecks, ANamedConfigurationThatIsMissingFails) {
  const SiteRequest request = site_request_for("nowhere.yaml");
  EXPECT_TRUE(request.config_named);
  const SiteReport r = check_site(request);
  EXPECT_EQ(find(r, CheckId::config)->status, CheckStatus::fail) << dump(r);
}

// A socket file whose listener is gone, and one whose listener never
// answers: both fail, the second once the bound passes, never hanging.
TEST_F(SiteChecks, AnEngineSocketNobodyAnswersOnFails) {
  const fs::path socket = m_dir / "e.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ScopedEnv docker_host("DOCKER_HOST", "unix://" + socket.string());
  SiteRequest request = site_request_for("");
  request.timeout = std::chrono::milliseconds(300);
  const SiteReport silent = check_site(request);
  const CheckResult* engine = find(silent, CheckId::engine);
  EXPECT_EQ(engine->status, CheckStatus::fail) << dump(silent);
  EXPECT_NE(engine->detail.find("did not answer within 0.3 s"), std::string::npos) << engine->detail;
  EXPECT_EQ(silent.exit_code(), util::ExitCode::check_failed);
  EXPECT_EQ(find(silent, CheckId::image)->status, CheckStatus::skipped);

  ::close(fd);  // the file stays; nobody listens
  const SiteReport gone = check_site(request);
  EXPECT_EQ(find(gone, CheckId::engine)->status, CheckStatus::fail) << dump(gone);
  EXPECT_NE(find(gone, CheckId::engine)->detail.find(socket.string()), std::string::npos);
}

// A configured remote on a port nobody listens on fails, and the password
// in its URL is said nowhere.
TEST_F(SiteChecks, AnUnreachableRemoteFailsWithoutItsPassword) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t size = sizeof address;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size), 0);
  const std::string port = std::to_string(ntohs(address.sin_port));
  ::close(fd);
  ScopedEnv remote("ORCHESTRATE_REMOTE", "http://ci:hunter2secret@127.0.0.1:" + port + "/team/sets");
  SiteRequest request = site_request_for("");
  request.timeout = std::chrono::milliseconds(2000);
  const SiteReport r = check_site(request);
  const CheckResult* check = find(r, CheckId::remote);
  EXPECT_EQ(check->status, CheckStatus::fail) << dump(r);
  EXPECT_EQ(check->subject, "http://127.0.0.1:" + port + "/team/sets");
  EXPECT_EQ(r.exit_code(), util::ExitCode::check_failed);
  // With a remote configured and no key trusted, every fetch would be refused.
  EXPECT_EQ(find(r, CheckId::trusted_keys)->status, CheckStatus::fail);
  DoctorReport report;
  report.site = r;
  for (const auto format : {cli::Format::text, cli::Format::json})
    EXPECT_EQ(cli::render(report, format).find("hunter2secret"), std::string::npos);
}

TEST_F(SiteChecks, AMalformedRemoteVariableFailsWithoutQuotingIt) {
  ScopedEnv remote("ORCHESTRATE_REMOTE", "ftp://ci:hunter2secret@host/x");
  const SiteReport r = check_site(site_request_for(""));
  EXPECT_EQ(find(r, CheckId::remote)->status, CheckStatus::fail) << dump(r);
  EXPECT_EQ(dump(r).find("hunter2secret"), std::string::npos);
}

TEST_F(SiteChecks, KeysArePresentAndTrustedOrABrokenTrustStoreFails) {
  auto made = cache::generate_key(m_dir / "keys");
  ASSERT_TRUE(made) << made.error().message;
  const SiteReport r = check_site(site_request_for(""));
  EXPECT_EQ(find(r, CheckId::signing_key)->status, CheckStatus::ok);
  EXPECT_NE(find(r, CheckId::signing_key)->detail.find(made->key_id), std::string::npos);
  EXPECT_EQ(find(r, CheckId::trusted_keys)->status, CheckStatus::ok);
  EXPECT_NE(find(r, CheckId::trusted_keys)->detail.find("1 trusted: " + made->key_id), std::string::npos);

  std::ofstream(m_dir / "keys" / "trusted" / "junk.pem") << "not a key\n";
  const SiteReport broken = check_site(site_request_for(""));
  EXPECT_EQ(find(broken, CheckId::trusted_keys)->status, CheckStatus::fail) << dump(broken);
  EXPECT_EQ(broken.exit_code(), util::ExitCode::check_failed);
}

// SLURM_CONF says the site uses Slurm; a controller that is not there (or
// no sinfo at all) fails the check.
TEST_F(SiteChecks, SlurmNamedButNotAnsweringFails) {
  write("slurm.conf", "ClusterName=none\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\n");
  ScopedEnv conf("SLURM_CONF", (m_dir / "slurm.conf").string());
  SiteRequest request = site_request_for("");
  request.timeout = std::chrono::milliseconds(1500);
  const SiteReport r = check_site(request);
  const CheckResult* slurm = find(r, CheckId::slurm);
  EXPECT_EQ(slurm->status, CheckStatus::fail) << dump(r);
  EXPECT_NE(slurm->detail.find("SLURM_CONF is set"), std::string::npos) << slurm->detail;
}

// A configuration read on the host engine: every tier gets a toolkit
// result from plan_on_host, and no image is asked for.
TEST_F(SiteChecks, OnTheHostEngineEachTierGetsAToolkitResult) {
  if (fs::exists("/var/run/docker.sock") || fs::exists("/run/podman/podman.sock"))
    GTEST_SKIP() << "this machine has an engine socket, which doctor would ask";
  write("orchestrate.yaml", cli::testing::k_config);
  fs::create_directories(m_dir / "src");
  ScopedEnv toolkits("ORCHESTRATE_HOST_TOOLKITS", (m_dir / "no-toolkits").string());
  ScopedEnv host_cuda("ORCHESTRATE_HOST_CUDA", (m_dir / "no-cuda").string());
  ScopedEnv path("PATH", "/usr/bin:/bin");
  const SiteReport r = check_site(site_request_for(""));
  EXPECT_NE(find(r, CheckId::config)->status, CheckStatus::fail) << dump(r);
  EXPECT_TRUE(find(r, CheckId::config)->detail.starts_with("2 tiers, 3 recipes")) << dump(r);
  const CheckResult* tier_new = find(r, CheckId::toolkit, "tier-new");
  ASSERT_NE(tier_new, nullptr) << dump(r);
  const CheckResult* tier_mixed = find(r, CheckId::toolkit, "tier-mixed");
  ASSERT_NE(tier_mixed, nullptr) << dump(r);
  EXPECT_EQ(find(r, CheckId::image)->status, CheckStatus::skipped);
  EXPECT_NE(find(r, CheckId::image)->detail.find("host engine"), std::string::npos);
}

TEST(SiteReportRender, EachResultWithItsFixAndTheCountsAndJson) {
  DoctorReport report;
  report.driver_error = "no NVIDIA driver on this machine";
  report.site = SiteReport{};
  report.site->checks = {
      {.id = CheckId::config, .subject = "o.yaml", .status = CheckStatus::ok, .detail = "1 tiers, 1 recipes"},
      {.id = CheckId::image,
       .subject = "tier-new",
       .status = CheckStatus::fail,
       .detail = "orchestrate/cuda:12.4-trixie: never built here",
       .fix = "orchestrate images build 12.4-trixie"},
      {.id = CheckId::remote, .status = CheckStatus::skipped, .detail = "no remote configured"},
  };
  EXPECT_EQ(report.site->exit_code(), util::ExitCode::check_failed);
  const std::string text = cli::render(report, cli::Format::text);
  EXPECT_NE(text.find("GPUs: none usable: no NVIDIA driver on this machine\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  [FAIL]  image   tier-new: orchestrate/cuda:12.4-trixie: never built here\n"
                      "                  fix: orchestrate images build 12.4-trixie\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("site checks: 1 ok, 0 warnings, 1 failed, 1 skipped\n"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(cli::render(report, cli::Format::json));
  ASSERT_EQ(j["site"]["checks"].size(), 3u);
  EXPECT_EQ(j["site"]["checks"][1]["check"], "image");
  EXPECT_EQ(j["site"]["checks"][1]["status"], "fail");
  EXPECT_EQ(j["site"]["checks"][1]["fix"], "orchestrate images build 12.4-trixie");
  EXPECT_TRUE(j["site"]["checks"][2]["fix"].is_null());
  EXPECT_TRUE(j["site"]["checks"][2]["subject"].is_null());
  EXPECT_EQ(j["site"]["exit_code"], 1);
  EXPECT_EQ(j["site"]["failed"], 1);
}

}  // namespace
}  // namespace orc::app
