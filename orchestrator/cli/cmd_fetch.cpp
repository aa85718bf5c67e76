#include <CLI/CLI.hpp>

#include "orchestrator/app/transfer/fetch.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/transfer_options.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Fetches the newest verified artifact set of RECIPE for --tier, or exactly the
one --digest names: from the local store when it is there, else pulled from
the remote into the store. Checks the files' digests, the manifest's
signature (trusted keys) and that every GPU of the tier runs it natively or,
where the tier's ptx policy allows, by PTX JIT; then unpacks it into DIR
(default RECIPE-TIER; it must not exist or be empty), refusing absolute
paths, '..', links that leave DIR and device files. --json prints
{"recipe", "tier", "digest", "dir", "from", "files": [{"path", "sha256", "sass",
"ptx"}], "verified": {"digest", "signature", "archs"}} (plus "smoke" under
--require-smoke, which refuses a set without a passing smoke attestation for
the tier and, by tier, takes the newest set that has one).

Exit codes: 0 fetched; 1 a check failed (digest, signature, archs, a hostile
layer); 2 bad usage, unknown tier, not found; 3 the registry failed and the
local store could not serve.)";

}  // namespace

void attach_fetch(CLI::App& sub, Io& io) {
  auto opt = add_transfer_options(sub, RecipeArg::required);
  sub.get_option("--tier")->required();
  auto out_dir = std::make_shared<std::string>();
  sub.add_option("-o,--output", *out_dir, "Directory to unpack into (default: RECIPE-TIER)");
  sub.add_flag("--insecure", opt->request.insecure,
               "Accept a set whose signature does not verify (said on stderr every time); digests and archs are "
               "still checked");
  sub.add_flag("--require-smoke", opt->request.require_smoke,
               "Only a set whose signed manifest attests a passing 'orchestrate smoke' run for the tier (by tier: "
               "the newest such set)");
  sub.footer(std::string(k_footer) + "\n\n" + k_remote_footer);
  sub.callback([opt, out_dir, &io] {
    const app::TransferRequest request = finish_request(*opt, io);
    emit(io, app::fetch(request, *out_dir), request.json ? Format::json : Format::text);
  });
}

}  // namespace orc::cli
