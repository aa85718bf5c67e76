#include <CLI/CLI.hpp>
#include <memory>

#include "orchestrator/app/watch/watch.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(The feeds are the configuration's `watch:` (recipes/schema.md): registry
repositories of nvidia/cuda-scheme tags (each kept tag's manifest digest is
read, so a base rebuilt under its tag counts) and NVIDIA redistributable
indexes. Each recipe x tier's newest verified artifact set in the local
store ($ORCHESTRATE_CACHE_DIR, else $XDG_CACHE_HOME/orchestrate) is compared
with what they offer, under the recipe's `watch:` policy (patch, minor,
major, pinned). A newer toolkit that drops a GPU of the tier is declined
with the last toolkit that serves it.

This release reports; it does not rebuild yet, so --once and --dry-run are
both required.

Exit codes: 0 the report was made (stale pairs or not); 2 bad usage or a
configuration without watch:; 3 every feed failed, or the store failed.)";

}  // namespace

void attach_watch(CLI::App& sub, Io& io) {
  auto request = std::make_shared<app::WatchRequest>();
  auto file = std::make_shared<std::string>();
  auto once = std::make_shared<bool>(false);
  auto dry_run = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  sub.footer(k_footer);
  sub.add_flag("--once", *once, "One cycle: poll every feed, judge every recipe x tier, and exit");
  sub.add_flag("--dry-run", *dry_run, "Report what is stale and why; build nothing");
  sub.add_flag("--json", *json, "Print {\"feeds\", \"pairs\"} as JSON on stdout, nothing else");
  sub.add_option("-f,--file", *file, "Configuration (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  sub.callback([=, &io] {
    if (!*once || !*dry_run)
      throw util::Failure(util::ExitCode::bad_input,
                          "orchestrate watch reports what is stale and does not rebuild yet: run 'orchestrate watch "
                          "--once --dry-run'");
    request->config = site::locate_config(*file);
    emit(io, app::watch_once(*request), *json ? Format::json : Format::text);
  });
}

}  // namespace orc::cli
