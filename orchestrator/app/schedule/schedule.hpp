#pragma once
// `orchestrate schedule`: what runs the watcher on a schedule without a
// long-running process of ours: a systemd service and timer (the service a
// oneshot `watch --once`; the timer starts it every interval, measured from
// its last start, and first a few minutes after boot), or a crontab line.
// The units are the output: text a user installs, checked by
// `systemd-analyze verify` in the tests.
#include <chrono>
#include <expected>
#include <filesystem>
#include <string>
#include <vector>

namespace orc::app {

struct ScheduleRequest {
  std::filesystem::path binary;  // absolute: the orchestrate to run
  std::filesystem::path config;  // absolute
  std::chrono::seconds interval{6 * 3600};
  std::string name = "orchestrate-watch";  // the units' name
  // ORCHESTRATE_* variables of the calling shell the units should keep
  // (the store, the remote, the keys), as NAME=VALUE.
  std::vector<std::string> environment;
};

struct SystemdUnits {
  std::string service_name;  // "orchestrate-watch.service"
  std::string service;
  std::string timer_name;
  std::string timer;
};

SystemdUnits systemd_units(const ScheduleRequest& request);
// Writes the two units into `dir` (atomically); the paths written. Throws
// util::Failure (outside_failure) when a file cannot be written.
std::vector<std::filesystem::path> write_systemd_units(const SystemdUnits& units, const std::filesystem::path& dir);

// The variables of this process a scheduled watcher needs (the store, keys,
// remote, host toolkits, engine sockets), as NAME=VALUE. A remote whose URL
// holds credentials is left out (`remote_left_out`): units and crontabs are
// often world-readable.
struct ScheduleEnvironment {
  std::vector<std::string> kept;
  bool remote_left_out = false;
};
ScheduleEnvironment schedule_environment();
// A crontab line; an error (bad usage) when cron cannot say the interval:
// it must divide an hour (minutes), a day (hours) or be whole days.
std::expected<std::string, std::string> cron_line(const ScheduleRequest& request);

}  // namespace orc::app
