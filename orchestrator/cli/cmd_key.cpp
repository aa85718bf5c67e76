#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "orchestrator/app/key/key_cmd.hpp"
#include "orchestrator/cli/render.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Keys live in $ORCHESTRATE_KEYS_DIR, else $XDG_CONFIG_HOME/orchestrate/keys:
signing.pem (private, 0600), signing.pub.pem, trusted/<key id>.pem. A key id
is the first 16 hex digits of the SHA-256 of the raw Ed25519 public key.)";

}  // namespace

void attach_key(CLI::App& sub, Io& io) {
  auto request = std::make_shared<app::KeyRequest>();
  sub.require_subcommand(1);
  sub.footer(k_footer);

  CLI::App* generate = sub.add_subcommand("generate", "Make this machine's Ed25519 signing key (and trust it here)");
  generate->add_flag("--force", request->force, "Replace an existing key");
  generate->add_flag("--json", request->json, "Print {\"key_id\", \"private_key\", \"public_key\"} as JSON");
  generate->callback(
      [request, &io] { emit(io, app::key_generate(*request), request->json ? Format::json : Format::text); });

  CLI::App* exp = sub.add_subcommand("export", "Print the public key (PEM) for other machines to trust");
  exp->add_flag("--json", request->json, "Print {\"key_id\", \"public_key\"} as JSON");
  exp->callback([request, &io] { emit(io, app::key_export(*request), request->json ? Format::json : Format::text); });

  CLI::App* trust = sub.add_subcommand("trust", "Accept signatures by these public keys (PEM files)");
  trust->add_option("files", request->files, "Public keys, as 'orchestrate key export' prints them")->required();
  trust->add_flag("--json", request->json, "Print {\"trusted\": [{\"key_id\", \"file\"}]} as JSON");
  trust->callback([request, &io] { emit(io, app::key_trust(*request), request->json ? Format::json : Format::text); });
}

}  // namespace orc::cli
