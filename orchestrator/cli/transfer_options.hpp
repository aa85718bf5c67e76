#pragma once
// The options push, pull and fetch share, so the three commands spell them
// the same way.
#include <cstdint>
#include <memory>
#include <string>

#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/cli/commands.hpp"

namespace orc::cli {

struct TransferOptions {
  app::TransferRequest request;
  std::string file;                     // -f
  double timeout_seconds = 60;          // --timeout: DeadlinePolicy::base
  std::uint64_t min_rate = 512u << 10;  // --min-rate: DeadlinePolicy::min_rate
};

enum class RecipeArg { optional, required };

// Adds RECIPE, --tier, --digest, --json, -f, --timeout and --min-rate to `sub`.
std::shared_ptr<TransferOptions> add_transfer_options(CLI::App& sub, RecipeArg recipe);
// The request with the configuration located and stderr's progress set up.
app::TransferRequest finish_request(const TransferOptions& options, Io& io);

inline constexpr const char* k_remote_footer =
    R"(The remote is $ORCHESTRATE_REMOTE, else 'remote:' in orchestrate.yaml: an OCI
repository URL such as http://127.0.0.1:5000/team/artifacts (credentials may be
in the URL; they are never printed). The store is $ORCHESTRATE_CACHE_DIR, else
$XDG_CACHE_HOME/orchestrate. Trusted keys: the keys dir's trusted/ ('orchestrate
key trust') and 'trusted_keys:' in orchestrate.yaml.)";

}  // namespace orc::cli
