#include "orchestrator/cli/transfer_options.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/env.hpp"

namespace orc::cli {

namespace {

// Each registry operation's deadline (registry/deadline.hpp): --timeout for
// a small exchange, plus a blob's size at --min-rate for a blob.
void add_deadline_options(CLI::App& sub, TransferOptions& opt) {
  sub.add_option("--timeout", opt.timeout_seconds,
                 "Seconds one registry operation may take: a manifest, a tag list, a token (default 60); a blob "
                 "gets this plus its size at --min-rate, for all its retries and resumes")
      ->envname("ORCHESTRATE_TIMEOUT")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.001, 1e7).description(""));
  sub.add_option("--min-rate", opt.min_rate,
                 "The slowest transfer, in bytes per second, a blob is given time for: 512KiB (default), 2MB, "
                 "100kb (k = 1024)")
      ->envname("ORCHESTRATE_MIN_RATE")
      ->type_name("BYTES")
      ->transform(CLI::AsSizeValue(false).description(""))
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40).description(""));
}

}  // namespace

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
  add_deadline_options(sub, *opt);
  return opt;
}

app::TransferRequest finish_request(const TransferOptions& options, Io& io) {
  app::TransferRequest request = options.request;
  request.deadlines = {.base = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_seconds * 1000)),
                       .min_rate = options.min_rate};
  request.config = site::locate_config(options.file);
  request.config_named = !options.file.empty() || util::env_get("ORCHESTRATE_CONFIG").has_value();
  request.progress = &io.err;
  request.terminal = ::isatty(STDERR_FILENO) == 1 ? app::Terminal::yes : app::Terminal::no;
  return request;
}

}  // namespace orc::cli
