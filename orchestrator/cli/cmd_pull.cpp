#include <CLI/CLI.hpp>

#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/transfer_options.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Pulls the newest artifact set of RECIPE for --tier (the tag RECIPE--TIER), or
the one --digest names, into the local store: signature and arch coverage
checked before the layer is downloaded, every digest checked while reading,
the index row written only when every blob is in.

Exit codes: 0 pulled (or already stored); 1 refused (digest, signature, archs,
a hostile layer); 2 bad usage or not found; 3 the registry failed.)";

}  // namespace

void attach_pull(CLI::App& sub, Io& io) {
  auto opt = add_transfer_options(sub, RecipeArg::required);
  sub.get_option("--tier")->required();
  sub.add_flag("--insecure", opt->request.insecure,
               "Accept a set whose signature does not verify (said on stderr every time); digests and archs are "
               "still checked");
  sub.add_flag("--require-smoke", opt->request.require_smoke,
               "Only a set whose signed manifest attests a passing 'orchestrate smoke' run for the tier (by tier: "
               "the newest such set)");
  sub.footer(std::string(k_footer) + "\n\n" + k_remote_footer);
  sub.callback([opt, &io] {
    const app::TransferRequest request = finish_request(*opt, io);
    emit(io, app::pull(request), request.json ? Format::json : Format::text);
  });
}

}  // namespace orc::cli
