#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <ostream>

#include "orchestrator/app/tables/tables.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/render.hpp"

namespace orc::cli {

void attach_gpus(CLI::App& sub, Io& io) {
  struct Options {
    std::string name;
    std::string cc;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  sub.add_option("name", opt->name,
                 "A product (\"RTX 4090\", \"NVIDIA H100 80GB HBM3\"), an architecture (\"Blackwell\") or part of "
                 "names (\"RTX 50\")");
  sub.add_option("--cc", opt->cc, "Only GPUs of this compute capability (\"8.6\")");
  sub.add_flag("--json", opt->json, "Print JSON on stdout, nothing else");
  sub.callback([opt, &io] {
    const auto report = app::list_gpus({.name = opt->name.empty() ? std::nullopt : std::optional(opt->name),
                                        .cc = opt->cc.empty() ? std::nullopt : std::optional(opt->cc)});
    io.out << render(report, opt->json ? Format::json : Format::text);
  });
}

void attach_toolkits(CLI::App& sub, Io& io) {
  struct Options {
    bool cudnn = false;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  sub.add_flag("--cudnn", opt->cudnn, "List cuDNN releases instead of toolkits");
  sub.add_flag("--json", opt->json, "Print a JSON list on stdout, nothing else");
  sub.callback(
      [opt, &io] { io.out << render(app::list_toolkits(opt->cudnn), opt->json ? Format::json : Format::text); });
}

}  // namespace orc::cli
