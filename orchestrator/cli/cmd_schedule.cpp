#include <CLI/CLI.hpp>
#include <memory>

#include "orchestrator/app/schedule/schedule.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/duration.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(--systemd prints two units, a oneshot service that runs `orchestrate watch
--once -f CONFIG` and a timer that starts it every --interval (first 5
minutes after boot). Install them with:

  orchestrate schedule --systemd --write /etc/systemd/system
  systemctl daemon-reload && systemctl enable --now orchestrate-watch.timer

--cron prints one crontab line (append it with `crontab -e`); its output
goes to orchestrate-watch.log beside the configuration.

The units keep the store, keys, engine and toolkit variables of this shell
(ORCHESTRATE_CACHE_DIR, ORCHESTRATE_KEYS_DIR, ORCHESTRATE_REMOTE,
ORCHESTRATE_HOST_TOOLKITS, DOCKER_HOST, CONTAINER_HOST); a remote URL with
credentials is left out (say so on stderr), to be given through an
EnvironmentFile= or the crontab's own environment.)";

}  // namespace

void attach_schedule(CLI::App& sub, Io& io) {
  struct Options {
    bool systemd = false;
    bool cron = false;
    std::string interval = "6h";
    std::string file;
    std::string write;
    std::string name = "orchestrate-watch";
  };
  auto opt = std::make_shared<Options>();
  sub.footer(k_footer);
  sub.add_flag("--systemd", opt->systemd, "Print a service and a timer unit");
  sub.add_flag("--cron", opt->cron, "Print a crontab line");
  sub.add_option("--interval", opt->interval, "How often: 30m, 6h, 1d (default 6h)");
  sub.add_option("--name", opt->name, "The units' name (default orchestrate-watch)");
  sub.add_option("--write", opt->write, "With --systemd: write the two units into this directory instead");
  sub.add_option("-f,--file", opt->file,
                 "Configuration (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  sub.callback([opt, &io] {
    if (opt->systemd == opt->cron)
      throw util::Failure(util::ExitCode::bad_input, "orchestrate schedule needs exactly one of --systemd and --cron");
    const auto interval = parse_duration(opt->interval);
    if (!interval)
      throw util::Failure(
          util::ExitCode::bad_input,
          "--interval '" + opt->interval + "': expected a positive duration like 30m, 6h or 1d (a year at most)");
    if (opt->name.empty() ||
        opt->name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
            std::string::npos)
      throw util::Failure(util::ExitCode::bad_input,
                          "--name '" + opt->name + "': letters, digits, '-', '_' and '.' only");
    std::error_code ec;
    app::ScheduleRequest request{
        .binary = std::filesystem::read_symlink("/proc/self/exe", ec),
        .config = std::filesystem::weakly_canonical(std::filesystem::absolute(site::locate_config(opt->file))),
        .interval = *interval,
        .name = opt->name,
        .environment = {}};
    if (ec)
      throw util::Failure(util::ExitCode::outside_failure,
                          "cannot tell where this orchestrate binary is: " + ec.message());
    const app::ScheduleEnvironment environment = app::schedule_environment();
    request.environment = environment.kept;
    if (environment.remote_left_out)
      io.err << "orchestrate: warning: ORCHESTRATE_REMOTE holds credentials and is left out of the "
             << (opt->systemd ? "units" : "crontab line") << ": give it through "
             << (opt->systemd ? "an EnvironmentFile= readable by root only" : "the crontab's own environment") << "\n";
    if (opt->cron) {
      auto line = app::cron_line(request);
      if (!line) throw util::Failure(util::ExitCode::bad_input, line.error());
      io.out << *line;
      return;
    }
    const app::SystemdUnits units = app::systemd_units(request);
    if (opt->write.empty()) {
      io.out << units.service << "\n" << units.timer;
      return;
    }
    for (const auto& path : app::write_systemd_units(units, opt->write)) io.out << "wrote " << path.string() << "\n";
  });
}

}  // namespace orc::cli
