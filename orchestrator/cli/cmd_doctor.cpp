#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "orchestrator/app/doctor/doctor.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/table.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(This node: the driver, its GPUs, the toolkits, and the frameworks found in
python3's site-packages/dist-packages (its sys.path) and in every --path
directory: torch/lib/libtorch_cuda*.so and the CUDA libraries PyTorch's wheels
bundle (nvidia/*/lib). A --path file is inspected as it is. Per GPU: "native",
"jit", "none", or "unknown" for a compute capability the GPU tables do not
know. Without a GPU or driver it says so and reports the rest.

The site: each check below with its result (ok, warn, fail, or skipped with
the reason: no remote configured is not a failure, a configured remote that
does not answer is) and the command that fixes it. Each outside system gets
--timeout seconds.)";

constexpr const char* k_exit = R"(Exit code 0 when no site check failed, 1 when one did (an unreachable engine,
registry or Slurm included), 2 for bad usage, 3 when the report cannot be
written.)";

std::string footer() {
  std::string text = std::string(k_footer) + "\n\nChecks:\n";
  // Wrapped as the text above is, to fit 80 columns.
  for (const auto& c : app::check_table()) {
    for (const auto& line : wrap_hanging(std::string(c.checks), "  " + std::string(c.name) + ": ", "      ", 79))
      text += line + "\n";
    for (const auto& line : wrap_hanging(std::string(c.fix), "    fix: ", "      ", 79)) text += line + "\n";
  }
  return text + "\n" + k_exit;
}

}  // namespace

void attach_doctor(CLI::App& sub, Io& io) {
  struct Options {
    std::vector<std::string> paths;
    std::string file;
    double timeout_seconds = 10;
    bool no_python = false;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  sub.add_option("--path", opt->paths,
                 "A library to diagnose, or a directory searched like site-packages (repeatable)");
  sub.add_flag("--no-python", opt->no_python, "Do not ask python3 for its package directories");
  sub.add_option("-f,--file", opt->file,
                 "Configuration file (default: $ORCHESTRATE_CONFIG, ./orchestrate.yaml, ./recipes/orchestrate.yaml)");
  sub.add_option("--timeout", opt->timeout_seconds,
                 "Seconds each outside system (engine socket, registry, Slurm) may take to answer (default 10)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0).description(""));
  sub.add_flag("--json", opt->json, "Print the report as JSON on stdout, nothing else");
  sub.footer(footer());

  sub.callback([opt, &io] {
    app::DoctorRequest request;
    for (const auto& p : opt->paths) request.paths.emplace_back(p);
    request.search_python = !opt->no_python;
    app::DoctorReport report = app::doctor(request);
    app::SiteRequest site = app::site_request_for(opt->file);
    site.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(opt->timeout_seconds * 1000));
    report.site = app::check_site(site);
    io.out << render(report, opt->json ? Format::json : Format::text);
    io.exit_code = report.site->exit_code();
  });
}

}  // namespace orc::cli
