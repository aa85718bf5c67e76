#include "orchestrator/cli/transfer_options.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "orchestrator/app/config_path.hpp"

namespace orc::cli {

std::shared_ptr<TransferOptions> add_transfer_options(CLI::App& sub, RecipeArg recipe) {
  auto opt = std::make_shared<TransferOptions>();
  auto* name = sub.add_option("recipe", opt->request.recipe, "The recipe, as named in orchestrate.yaml");
  if (recipe == RecipeArg::required) name->required();
  sub.add_option("-t,--tier", opt->request.tier, "The tier");
  sub.add_option("--digest", opt->request.digest,
                 "Exactly this artifact set: its manifest digest or a unique prefix (sha256: optional)");
  sub.add_flag("--json", opt->request.json, "Print the result as JSON on stdout, nothing else");
  sub.add_option("-f,--file", opt->file,
                 "Configuration file (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  return opt;
}

app::TransferRequest finish_request(const TransferOptions& options, Io& io) {
  app::TransferRequest request = options.request;
  request.config = app::locate_config(options.file);
  request.progress = &io.err;
  request.terminal = ::isatty(STDERR_FILENO) == 1 ? app::Terminal::yes : app::Terminal::no;
  return request;
}

}  // namespace orc::cli
