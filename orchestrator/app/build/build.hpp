#pragma once
// `orchestrate build TIER`: plan, key, and on a miss build in an engine,
// collect the artifacts, inspect and verify them, and store them with a
// manifest. A hit needs no engine at all.
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/arch/arch_list.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/compat/toolkits.hpp"
#include "orchestrator/digest/digest.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/engine.hpp"
#include "orchestrator/front/front.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::app {

// The watcher's rebuild (app/watch): the build runs in this image, which the
// caller has pulled into the engine, instead of the one the plan would
// choose, and the plan resolves with the toolkit row of its tag's
// major.minor only. The registry digest is part of the cache key and of
// the manifest, so a base rebuilt under its tag is a new build.
struct ImageOverride {
  std::string reference;                               // "127.0.0.1:5000/nvidia/cuda:13.0.2-devel-ubuntu24.04"
  std::string digest;                                  // "sha256:..." of the tag's manifest in its registry
  util::Version toolkit;                               // 13.0.2, as the tag (or the image's probed nvcc) says
  std::string cuda_home{compat::k_default_host_cuda};  // nvidia/cuda's
};

struct BuildRequest {
  std::filesystem::path config;
  std::vector<std::string> tiers;                // at least one
  std::vector<std::string> recipes;              // empty = every recipe of the tiers
  std::optional<engine::EngineKind> engine;      // nullopt = discover
  unsigned jobs = 0;                             // 0 = one per core
  bool explain = false;                          // print every key input
  std::filesystem::path store_root;              // empty = cache::default_store_root()
  bool terminal = false;                         // stderr is a terminal: progress, not every log line
  bool keep_failed = false;                      // keep a failed build's tree, and name it
  std::optional<ImageOverride> image;            // the watcher's: build in this image (container engines only)
  std::optional<cache::RebuildTrigger> trigger;  // the watcher's: why, recorded in the manifest
  // Set by a caller that handles SIGINT/SIGTERM itself (the watcher's
  // service loop); null: build installs its own handlers for the run.
  engine::CancelFlag* cancel = nullptr;
  // A tree that stands in for a recipe's `source: {path: ...}`, by recipe
  // name: a build Job's verified source snapshot (k8s render), whose tree
  // hash is the one the workstation keyed the build with.
  std::map<std::string, std::filesystem::path> source_dirs;
  // The toolkit rows the plan resolves against: the sourced table when null;
  // the watcher's copy that learned what the image's nvcc lists otherwise.
  const compat::ToolkitTable* toolkits = nullptr;
};

struct BuiltArtifact {
  std::string name;  // where the build left it: "build/saxpy"
  std::string path;  // where it lies now: the blob in the store
  std::string sha256;
  std::uint64_t size = 0;
  arch::ArchList sass;  // embedded: "sm_80"
  arch::ArchList ptx;   // "compute_90"
  // The CUDA libraries it links that the set does not carry (the manifest's).
  std::vector<cache::LibraryNeed> needs;
};

enum class BuildStatus { built, cached, failed };

// What the nvcc front saw in one build (front/front.hpp): every nvcc call
// and every GPU probe of every step, as its call log holds them.
struct NvccReport {
  front::Policy policy = front::Policy::verify;
  std::vector<front::CallRecord> calls;
  // Device code in the artifacts, yet no nvcc call went through the front:
  // the project runs nvcc by a path of its own.
  bool bypassed = false;
};
// Lines for the text report: how many calls were judged and how they
// fared, what was enforced and why, each GPU probe once.
std::vector<std::string> nvcc_summary(const NvccReport& report);

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
  std::string kept_tree;               // with --keep-failed: where the failed build's tree was kept
  std::string image_made;              // `image:`: "REPO:TIER (sha256:...)"
  std::vector<std::string> image_env;  // `stamp: true`: the NVIDIA_REQUIRE_* written into it
  std::optional<NvccReport> nvcc;      // a build that ran (not a cache hit)
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

}  // namespace orc::app
