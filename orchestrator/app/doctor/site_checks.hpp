#pragma once
// `orchestrate doctor`'s site checks (issue 29): whether this machine can do
// what the site's configuration asks of it, flutter-doctor style. Each check
// is a row of one table (check_table(): its name, what it checks, the command
// that fixes it) and gives results: ok, warn, fail, or skipped with the
// reason (no remote configured is not a failure; a configured remote that
// does not answer is). An outside system that fails a check is a result, not
// an error: the report's exit code is 1 when any result failed, else 0.
// Every check that talks to something (the engine's socket, the registry,
// Slurm's commands) is bounded by SiteRequest::timeout, so a dead host or a
// socket nobody answers on cannot hang doctor.
#include <chrono>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

enum class CheckId { config, engine, toolkit, image, remote, signing_key, trusted_keys, slurm };

struct CheckInfo {
  CheckId id;
  std::string_view name;    // "engine": the word the report and --json use
  std::string_view checks;  // what it checks, one line
  std::string_view fix;     // the command that fixes a failure, in general
};

// Every check, in the order doctor runs and prints them.
std::span<const CheckInfo> check_table();
const CheckInfo& check_info(CheckId id);

enum class CheckStatus { ok, warn, fail, skipped };
std::string_view to_string(CheckStatus status);  // "ok", "warn", "fail", "skipped"

struct CheckResult {
  CheckId id = CheckId::config;
  std::string subject;  // what of the site it is about: a tier, a socket, a URL without credentials; may be empty
  CheckStatus status = CheckStatus::skipped;
  std::string detail;  // what was found, or why it was skipped; never a credential
  std::string fix;     // the command for this result (the table's, made specific); empty when ok
  std::chrono::milliseconds took{0};
};

struct SiteRequest {
  // The configuration to check; empty: none found (the config check says
  // where it looked).
  std::filesystem::path config;
  // Whether -f or ORCHESTRATE_CONFIG named it: then a missing file fails.
  bool config_named = false;
  // Each outside system's bound: a connection, an answer, a command.
  std::chrono::milliseconds timeout{10'000};
};

struct SiteReport {
  std::filesystem::path config;  // the file read; empty when none
  std::vector<CheckResult> checks;
  // 1 (check_failed) when a result failed, else 0.
  util::ExitCode exit_code() const;
};

// Runs every check of the table. Never throws for what it checks: an invalid
// configuration, an unreachable engine, registry or Slurm are results.
SiteReport check_site(const SiteRequest& request);

// The configuration check's first part, for the command line: which file
// check_site reads when no -f is given (ORCHESTRATE_CONFIG, ./orchestrate.yaml,
// ./recipes/orchestrate.yaml), and whether a variable named it. Empty when
// none of them exists and nothing named one.
SiteRequest site_request_for(const std::string& given_file);

}  // namespace orc::app
