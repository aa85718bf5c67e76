#include <CLI/CLI.hpp>

#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/transfer_options.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Makes the set --digest names the current set of RECIPE for --tier: the one
push, fetch --tier, k8s render and the Slurm smoke jobs hand out, even when a
newer set by time exists (a rebuild you are rolling back). With a remote, the
set is pushed (blobs the registry has are not sent again) and the moving tag
RECIPE--TIER is put on it; then the local store records it. The report names
the set each one had before. Without a remote only this store changes.

Exit codes: 0 promoted; 2 bad usage, no such set here, a set of another
recipe or tier, a set that is not verified; 3 the registry failed (then
nothing changed here).)";

}  // namespace

void attach_promote(CLI::App& sub, Io& io) {
  auto opt = add_transfer_options(sub, RecipeArg::required);
  sub.get_option("--tier")->required();
  sub.get_option("--digest")->required();
  sub.footer(std::string(k_footer) + "\n\n" + k_remote_footer);
  sub.callback([opt, &io] {
    const app::TransferRequest request = finish_request(*opt, io);
    emit(io, app::promote(request), request.json ? Format::json : Format::text);
  });
}

}  // namespace orc::cli
