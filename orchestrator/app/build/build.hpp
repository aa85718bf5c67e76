#pragma once
// `orchestrate build TIER`: plan, key, and on a miss build in an engine,
// collect the artifacts, inspect and verify them, and store them with a
// manifest. A hit needs no engine at all.
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/digest/digest.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::app {

struct BuildRequest {
  std::filesystem::path config;
  std::vector<std::string> tiers;            // at least one
  std::vector<std::string> recipes;          // empty = every recipe of the tiers
  std::optional<engine::EngineKind> engine;  // nullopt = discover
  unsigned jobs = 0;                         // 0 = one per core
  bool explain = false;                      // print every key input
  std::filesystem::path store_root;          // empty = cache::default_store_root()
  bool terminal = false;                     // stderr is a terminal: progress, not every log line
  bool keep_failed = false;                  // keep a failed build's tree, and name it
};

struct BuiltArtifact {
  std::string name;  // where the build left it: "build/saxpy"
  std::string path;  // where it lies now: the blob in the store
  std::string sha256;
  std::uint64_t size = 0;
  std::vector<std::string> sass;
  std::vector<std::string> ptx;
};

enum class BuildStatus { built, cached, failed };

struct BuildResult {
  std::string recipe;
  std::string tier;
  BuildStatus status = BuildStatus::failed;
  // What it was built with (for a hit: what the key says it was built with).
  std::optional<util::Version> toolkit;  // the image's or host's nvcc; nullopt when none was chosen
  std::optional<std::string> image;      // "host" for the host engine
  engine::EngineKind engine = engine::EngineKind::host;
  std::string key;
  std::optional<digest::Digest> manifest;  // when stored
  std::vector<BuiltArtifact> artifacts;
  std::string explain;  // the key's inputs, one per line (with --explain)
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  std::string log_file;
  std::string kept_tree;  // with --keep-failed: where the failed build's tree was kept
  double seconds = 0;
  util::ExitCode exit_code = util::ExitCode::ok;  // 1 build or verification failed, 2 bad input, 3 the engine
};

// A warning of the run (the configuration's, or the plan's), once, with
// the builds it concerns ("recipe/tier"; empty for the configuration's).
struct RunWarning {
  std::string text;
  std::vector<std::string> builds;
};

struct BuildReport {
  std::vector<BuildResult> builds;
  std::vector<RunWarning> warnings;
  util::ExitCode exit_code() const;  // the worst: 3 over 2 over 1 over 0
};

// Streams build logs and progress to `progress` (stderr) as it goes.
// Throws util::Failure for bad input (unknown tier, unsatisfiable plan, an
// engine that cannot be chosen).
BuildReport build(const BuildRequest& request, std::ostream& progress);

std::string render_build_json(const BuildReport& report);
// Each build's line and artifacts; errors are not in it.
std::string render_build_text(const BuildReport& report, bool explain);
// Every build's errors, each as "orchestrate: error: RECIPE x TIER: ..." (stderr).
std::string render_build_errors(const BuildReport& report);

}  // namespace orc::app
