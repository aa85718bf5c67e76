// `orchestrate schedule`: the systemd units and the crontab line, pinned
// byte for byte, and the units checked by the real `systemd-analyze verify`
// where it is installed (Debian's systemd package; it needs no running
// systemd).
#include "orchestrator/app/schedule/schedule.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace orc::app {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

ScheduleRequest request(std::chrono::seconds interval) {
  return ScheduleRequest{.binary = "/usr/local/bin/orchestrate",
                         .config = "/srv/ci/orchestrate.yaml",
                         .interval = interval,
                         .name = "orchestrate-watch",
                         .environment = {"ORCHESTRATE_CACHE_DIR=/var/cache/orc store"}};
}

TEST(Schedule, SystemdUnitsRunOneCycleEveryInterval) {
  const SystemdUnits u = systemd_units(request(seconds(6 * 3600)));
  EXPECT_EQ(u.service_name, "orchestrate-watch.service");
  EXPECT_EQ(u.timer_name, "orchestrate-watch.timer");
  EXPECT_EQ(u.service,
            "# orchestrate-watch.service: one watch cycle (orchestrate schedule --systemd)\n"
            "[Unit]\n"
            "Description=Orchestrate: rebuild what new CUDA toolkits and base images make stale\n"
            "Wants=network-online.target\n"
            "After=network-online.target docker.service podman.socket\n"
            "\n"
            "[Service]\n"
            "Type=oneshot\n"
            "WorkingDirectory=/srv/ci\n"
            "Environment=\"ORCHESTRATE_CACHE_DIR=/var/cache/orc store\"\n"
            "ExecStart=/usr/local/bin/orchestrate watch --once -f /srv/ci/orchestrate.yaml\n"
            "# systemctl stop sends SIGTERM: the build under way is cancelled and\n"
            "# nothing of it is stored; the next cycle builds it again. The watcher\n"
            "# then exits 143 (130 for SIGINT): a stop, not a failed unit.\n"
            "SuccessExitStatus=130 143\n"
            "KillMode=mixed\n"
            "TimeoutStopSec=2min\n"
            "Nice=10\n");
  EXPECT_EQ(u.timer,
            "# orchestrate-watch.timer: starts orchestrate-watch.service every 6h\n"
            "[Unit]\n"
            "Description=Run orchestrate watch every 6h\n"
            "\n"
            "[Timer]\n"
            "OnBootSec=5min\n"
            "OnUnitActiveSec=6h\n"
            "RandomizedDelaySec=15min\n"
            "Unit=orchestrate-watch.service\n"
            "\n"
            "[Install]\n"
            "WantedBy=timers.target\n");
  EXPECT_NE(systemd_units(request(seconds(90 * 60))).timer.find("OnUnitActiveSec=90min\nRandomizedDelaySec=9min\n"),
            std::string::npos);
}

TEST(Schedule, PercentSignsAndQuotesAreEscapedForEachSyntax) {
  ScheduleRequest r = request(seconds(3600));
  r.config = "/srv/50% \"odd\"/orchestrate.yaml";
  EXPECT_NE(systemd_units(r).service.find("-f \"/srv/50%% \\\"odd\\\"/orchestrate.yaml\"\n"), std::string::npos)
      << systemd_units(r).service;
  const auto line = cron_line(r);
  ASSERT_TRUE(line) << line.error();
  EXPECT_NE(line->find("-f \"/srv/50\\% \\\"odd\\\"/orchestrate.yaml\""), std::string::npos) << *line;
}

TEST(Schedule, CronTakesIntervalsThatDivideAnHourADayOrAreWholeDays) {
  const auto six_hours = cron_line(request(seconds(6 * 3600)));
  ASSERT_TRUE(six_hours) << six_hours.error();
  EXPECT_EQ(*six_hours,
            "0 */6 * * * cd /srv/ci && ORCHESTRATE_CACHE_DIR=\"/var/cache/orc store\" /usr/local/bin/orchestrate "
            "watch --once -f /srv/ci/orchestrate.yaml >>/srv/ci/orchestrate-watch.log 2>&1\n");
  EXPECT_TRUE(cron_line(request(seconds(15 * 60)))->starts_with("*/15 * * * * "));
  EXPECT_TRUE(cron_line(request(seconds(3600)))->starts_with("0 * * * * "));
  EXPECT_TRUE(cron_line(request(seconds(86400)))->starts_with("0 0 * * * "));
  EXPECT_TRUE(cron_line(request(seconds(2 * 86400)))->starts_with("0 0 */2 * * "));
  const auto seven_hours = cron_line(request(seconds(7 * 3600)));
  ASSERT_FALSE(seven_hours);
  EXPECT_NE(seven_hours.error().find("cron cannot run every 420 minutes evenly"), std::string::npos);
  EXPECT_FALSE(cron_line(request(seconds(90))));
}

// The store and engine variables travel into the units; a remote URL with a
// password does not (units and crontabs are often world-readable).
TEST(Schedule, TheEnvironmentKeepsWhatTheWatcherNeedsButNoCredentials) {
  ::setenv("ORCHESTRATE_CACHE_DIR", "/var/cache/orc", 1);
  ::setenv("ORCHESTRATE_REMOTE", "http://ci:s3cret@127.0.0.1:5000/team/artifacts", 1);
  ScheduleEnvironment env = schedule_environment();
  EXPECT_NE(std::ranges::find(env.kept, "ORCHESTRATE_CACHE_DIR=/var/cache/orc"), env.kept.end());
  EXPECT_TRUE(env.remote_left_out);
  for (const auto& e : env.kept) EXPECT_EQ(e.find("s3cret"), std::string::npos) << e;
  ::setenv("ORCHESTRATE_REMOTE", "http://127.0.0.1:5000/team/artifacts", 1);
  env = schedule_environment();
  EXPECT_FALSE(env.remote_left_out);
  EXPECT_NE(std::ranges::find(env.kept, "ORCHESTRATE_REMOTE=http://127.0.0.1:5000/team/artifacts"), env.kept.end());
  ::unsetenv("ORCHESTRATE_CACHE_DIR");
  ::unsetenv("ORCHESTRATE_REMOTE");
}

// The real checker: a unit it rejects (a relative ExecStart, a binary that
// does not exist) fails here, so this test can fail.
TEST(Schedule, SystemdAnalyzeVerifiesTheUnits) {
  if (::access("/usr/bin/systemd-analyze", X_OK) != 0)
    GTEST_SKIP() << "systemd-analyze is not installed here (Debian's systemd package)";
  char dir_template[] = "/tmp/orc-schedule-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const fs::path dir = dir_template;
  ScheduleRequest r = request(seconds(6 * 3600));
  r.binary = "/bin/true";  // an executable that exists on every machine
  r.config = dir / "orchestrate.yaml";
  const SystemdUnits u = systemd_units(r);
  std::ofstream(dir / u.service_name) << u.service;
  std::ofstream(dir / u.timer_name) << u.timer;
  const std::string command =
      "cd " + dir.string() + " && systemd-analyze verify ./" + u.service_name + " ./" + u.timer_name + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << output;
  // Lines about units this machine lacks (docker.service) are not errors.
  EXPECT_EQ(output.find("orchestrate-watch"), std::string::npos) << output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orc::app
