#include "orchestrator/app/schedule/schedule.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/redact.hpp"

namespace orc::app {

namespace {

// systemd's own time span syntax: "6h", "90min", "45s".
std::string systemd_span(std::chrono::seconds s) {
  const auto n = s.count();
  if (n % 86400 == 0) return std::to_string(n / 86400) + "d";
  if (n % 3600 == 0) return std::to_string(n / 3600) + "h";
  if (n % 60 == 0) return std::to_string(n / 60) + "min";
  return std::to_string(n) + "s";
}

// A word of a unit's command line or of a crontab line, quoted when it
// needs to be (systemd and sh both take double quotes with \ escapes; %
// is a specifier in a unit and a newline in a crontab, so it is doubled
// for systemd and escaped for cron).
std::string quoted(const std::string& word, bool cron) {
  const bool plain = !word.empty() && std::ranges::all_of(word, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("/._-+=:,@").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string out = "\"";
  for (char c : word) {
    if (c == '"' || c == '\\' || (cron && (c == '$' || c == '`'))) out += '\\';
    if (c == '%') {
      out += cron ? "\\%" : "%%";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string command(const ScheduleRequest& r, bool cron) {
  return quoted(r.binary.string(), cron) + " watch --once -f " + quoted(r.config.string(), cron);
}

constexpr std::array<std::string_view, 6> k_kept = {"ORCHESTRATE_CACHE_DIR", "ORCHESTRATE_KEYS_DIR",
                                                    "ORCHESTRATE_REMOTE",    "ORCHESTRATE_HOST_TOOLKITS",
                                                    "DOCKER_HOST",           "CONTAINER_HOST"};

}  // namespace

ScheduleEnvironment schedule_environment() {
  ScheduleEnvironment out;
  for (const auto name : k_kept) {
    const std::string value = util::env_value(name);
    if (value.empty()) continue;
    if (name == "ORCHESTRATE_REMOTE" && util::redact_credentials(value) != value) {
      out.remote_left_out = true;
      continue;
    }
    out.kept.push_back(std::string(name) + "=" + value);
  }
  return out;
}

std::vector<std::filesystem::path> write_systemd_units(const SystemdUnits& units, const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> written;
  for (const auto& [file, text] :
       {std::pair{units.service_name, units.service}, std::pair{units.timer_name, units.timer}}) {
    if (auto done = util::write_file_atomic(dir / file, text); !done)
      throw util::Failure(util::ExitCode::outside_failure, "writing " + done.error().message);
    written.push_back(dir / file);
  }
  return written;
}

SystemdUnits systemd_units(const ScheduleRequest& r) {
  SystemdUnits out{.service_name = r.name + ".service", .service = {}, .timer_name = r.name + ".timer", .timer = {}};
  out.service = "# " + out.service_name +
                ": one watch cycle (orchestrate schedule --systemd)\n"
                "[Unit]\n"
                "Description=Orchestrate: rebuild what new CUDA toolkits and base images make stale\n"
                "Wants=network-online.target\n"
                "After=network-online.target docker.service podman.socket\n"
                "\n"
                "[Service]\n"
                "Type=oneshot\n"
                "WorkingDirectory=" +
                quoted(r.config.parent_path().string(), false) + "\n";
  for (const auto& e : r.environment) out.service += "Environment=" + quoted(e, false) + "\n";
  out.service += "ExecStart=" + command(r, false) +
                 "\n"
                 "# systemctl stop sends SIGTERM: the build under way is cancelled and\n"
                 "# nothing of it is stored; the next cycle builds it again. The watcher\n"
                 "# then exits 143 (130 for SIGINT): a stop, not a failed unit.\n"
                 "SuccessExitStatus=130 143\n"
                 "KillMode=mixed\n"
                 "TimeoutStopSec=2min\n"
                 "Nice=10\n";
  out.timer = "# " + out.timer_name + ": starts " + out.service_name + " every " + systemd_span(r.interval) +
              "\n"
              "[Unit]\n"
              "Description=Run orchestrate watch every " +
              systemd_span(r.interval) +
              "\n"
              "\n"
              "[Timer]\n"
              "OnBootSec=5min\n"
              "OnUnitActiveSec=" +
              systemd_span(r.interval) +
              "\n"
              "RandomizedDelaySec=" +
              systemd_span(std::min(r.interval / 10, std::chrono::seconds(900))) +
              "\n"
              "Unit=" +
              out.service_name +
              "\n"
              "\n"
              "[Install]\n"
              "WantedBy=timers.target\n";
  return out;
}

std::expected<std::string, std::string> cron_line(const ScheduleRequest& r) {
  const auto n = r.interval.count();
  std::string when;
  if (n % 60 != 0 || n < 60)
    return std::unexpected("cron runs at whole minutes: give --interval in minutes, hours or days");
  const auto minutes = n / 60;
  if (minutes < 60 && 60 % minutes == 0)
    when = minutes == 1 ? "* * * * *" : "*/" + std::to_string(minutes) + " * * * *";
  else if (minutes % 60 == 0 && minutes < 1440 && 24 % (minutes / 60) == 0)
    when = "0 " + (minutes == 60 ? std::string("*") : "*/" + std::to_string(minutes / 60)) + " * * *";
  else if (minutes % 1440 == 0 && minutes / 1440 <= 31)
    when = "0 0 " + (minutes == 1440 ? std::string("*") : "*/" + std::to_string(minutes / 1440)) + " * *";
  else
    return std::unexpected("cron cannot run every " + std::to_string(minutes) +
                           " minutes evenly: give an interval that divides an hour (15m), a day (6h), or whole days "
                           "(1d), or use --systemd");
  std::string env;
  // NAME=VALUE before the command: the value alone is quoted, or sh would
  // take the word for a command.
  for (const auto& e : r.environment) {
    const auto eq = e.find('=');
    env += e.substr(0, eq + 1) + quoted(e.substr(eq + 1), true) + " ";
  }
  return when + " cd " + quoted(r.config.parent_path().string(), true) + " && " + env + command(r, true) + " >>" +
         quoted((r.config.parent_path() / (r.name + ".log")).string(), true) + " 2>&1\n";
}

}  // namespace orc::app
