#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "orchestrator/app/doctor/doctor.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/render.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Frameworks are looked for in python3's site-packages/dist-packages (its
sys.path) and in every --path directory: torch/lib/libtorch_cuda*.so and the
CUDA libraries PyTorch's wheels bundle (nvidia/*/lib). A --path file is
inspected as it is. Per GPU: "native", "jit", "none", or "unknown" for a
compute capability the GPU tables do not know.

Without a GPU or driver it says so and reports the rest. Exit code 0 unless
the usage is bad (2), or the report cannot be written (3).)";

}  // namespace

void attach_doctor(CLI::App& sub, Io& io) {
  struct Options {
    std::vector<std::string> paths;
    bool no_python = false;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  sub.add_option("--path", opt->paths,
                 "A library to diagnose, or a directory searched like site-packages (repeatable)");
  sub.add_flag("--no-python", opt->no_python, "Do not ask python3 for its package directories");
  sub.add_flag("--json", opt->json, "Print the report as JSON on stdout, nothing else");
  sub.footer(k_footer);

  sub.callback([opt, &io] {
    app::DoctorRequest request;
    for (const auto& p : opt->paths) request.paths.emplace_back(p);
    request.search_python = !opt->no_python;
    const app::DoctorReport report = app::doctor(request);
    io.out << render(report, opt->json ? Format::json : Format::text);
    io.exit_code = util::ExitCode::ok;
  });
}

}  // namespace orc::cli
