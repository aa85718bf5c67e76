#pragma once
// `orchestrate smoke TIER`: build kernels/ for the tier (through app::build,
// so a second run is a cache hit), then on every GPU of this machine load
// the fatbin (native, jit or none), run and check every kernel; with
// --artifact, also load every fatbin the artifact's files embed.
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/digest/digest.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/smoke/result.hpp"

namespace orc::app {

inline constexpr std::string_view k_smoke_recipe = "smoke-kernels";

struct SmokeRequest {
  std::string tier;                             // required unless fatbin is given; always to attest a set
  std::filesystem::path config;                 // orchestrate.yaml holding the tier
  std::optional<std::filesystem::path> fatbin;  // run this fatbin instead of building kernels/
  std::vector<std::filesystem::path> artifacts;
  // Artifact sets of the local store, by manifest digest prefix: their files
  // are loaded like `artifacts`, and the outcome is attested in their
  // manifests (smoke_attest.hpp).
  std::vector<std::string> artifact_sets;
  // Recipes whose current set for the tier (cache/current.hpp: what `build`
  // last answered, or what `promote` named) is loaded and attested like an
  // artifact set named by digest.
  std::vector<std::string> recipes;
  std::optional<engine::EngineKind> engine;
  std::filesystem::path kernels_dir;  // empty = kernels_dir() below
  std::filesystem::path store_root;   // empty = default_store_root()
  std::string driver_library = "libcuda.so.1";
};

// The current set of a recipe x tier that a run loaded (SmokeRequest::recipes).
struct SmokedSet {
  std::string recipe;
  digest::Digest set;
  bool recorded = false;                // the recorded current set; false: the newest verified stood in
  std::optional<digest::Digest> newer;  // a verified set newer by time, not current
  std::optional<digest::Digest> stale;  // a record naming a set no longer here
};

struct SmokeOutput {
  smoke::SmokeResult result;
  std::optional<digest::Digest> build_manifest;  // of the kernels' build, when built
  // "sha256:NEW attests sha256:OLD for tier T: pass" per artifact set.
  std::vector<std::string> attestations;
  std::vector<SmokedSet> current_sets;  // one per SmokeRequest::recipes entry
};

// "RECIPE: the current set for TIER is sha256:..." and what stood in or is newer.
std::string describe_current(const SmokedSet& used, const std::string& tier);

// Throws util::Failure: bad_input for an unknown tier or unreadable files;
// check_failed when the kernels' build fails. No driver or GPU is a result
// (exit 3), not an exception.
SmokeOutput run_smoke(const SmokeRequest& request, std::ostream& progress);

// $ORCHESTRATE_KERNELS_DIR, else kernels/ of the source tree this binary was
// built from.
std::filesystem::path kernels_dir();

// The configuration that builds kernels/ for `tier` alone: the user's
// toolkits and that tier, and the smoke-kernels recipe (framework nvcc, so
// the plan's -gencode list reaches nvcc through NVCC_APPEND_FLAGS).
std::string smoke_config_yaml(const recipe::Config& config, const recipe::Tier& tier,
                              const std::filesystem::path& kernels);

}  // namespace orc::app
