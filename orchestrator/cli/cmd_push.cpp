#include <CLI/CLI.hpp>

#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/transfer_options.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Pushes the current artifact set of RECIPE for --tier (for every tier
without it), the set --digest names, or with --all every set of the store:
blobs first (each after a HEAD, so nothing is sent twice), then the OCI
manifest tagged RECIPE--TIER--<16 hex>, its signature as a referrer, and last
the moving tag RECIPE--TIER. The current set of a recipe x tier is the one
the last build answered (built, or a hit), or the one 'orchestrate promote'
named: a source edited and then reverted makes the older set current again.
The moving tag is put on the current set; another set takes it only when it
is newer by time than the one the tag names.

Exit codes: 0 pushed; 2 bad usage, nothing to push, no remote; 3 the registry
failed.)";

}  // namespace

void attach_push(CLI::App& sub, Io& io) {
  auto opt = add_transfer_options(sub, RecipeArg::optional);
  sub.add_flag("--all", opt->request.all, "Push every artifact set of the local store");
  sub.footer(std::string(k_footer) + "\n\n" + k_remote_footer);
  sub.callback([opt, &io] {
    const app::TransferRequest request = finish_request(*opt, io);
    emit(io, app::push(request), request.json ? Format::json : Format::text);
  });
}

}  // namespace orc::cli
