#pragma once
// `orchestrate stamp IMAGE --tier T`: writes into the image's config the
// constraints the NVIDIA container toolkit checks before it starts a
// container (NVIDIA/cloud-native-docs, container-toolkit
// docker-specialized.md; libnvidia-container src/cli/dsl.c), so that a node
// whose GPU or driver cannot run the image refuses it at start instead of
// failing at the first kernel launch:
//   NVIDIA_REQUIRE_CUDA  "cuda>=M.0": the newest CUDA runtime major the
//                        image's files link (a driver of CUDA M.0 or later
//                        runs it, minor-version compatibility)
//   NVIDIA_REQUIRE_ARCH  the device compute capabilities every library with
//                        device code runs on, natively or (unless
//                        --native-only) by JIT of its PTX, as
//                        arch::require_arch writes them
// The toolkit ANDs every NVIDIA_REQUIRE_* variable: an image's own
// NVIDIA_REQUIRE_CUDA (NVIDIA's images carry one, with brand clauses) is
// kept as NVIDIA_REQUIRE_CUDA_IMAGE rather than lost; its
// NVIDIA_DISABLE_REQUIRE, which makes the toolkit skip them all, is taken
// out (and said), or no node would refuse the stamped image.
//
// The image is scanned first (as inspect does) and judged on the tier's
// GPUs: an image that gets `none` on one of them is not stamped (exit 1).
// A local image becomes a new image through the engine (export, new
// config, load: the same layers), the old one untouched; a registry image
// gets a new config blob and a new manifest pushed beside the old one.
#include <cstddef>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/app/inspect/coverage.hpp"
#include "orchestrator/arch/requirement.hpp"
#include "orchestrator/digest/digest.hpp"

namespace orc::app {

struct StampValues {
  std::string require_cuda;  // empty when no file links a CUDA runtime
  std::string require_arch;  // empty when nothing bounds the GPUs
  // Libraries left out of NVIDIA_REQUIRE_ARCH: they register no kernel of
  // their own and build theirs at run time (NVRTC, nvJitLink), so nothing
  // embedded bounds where they run. A library that registers kernels is
  // bounded by them whatever it builds besides (a builder does not excuse
  // registered kernels that cannot run, as the verdicts say).
  std::vector<std::string> unbounded;
  bool runs_nowhere = false;                // libraries with device code share no GPU: nothing to stamp
  std::vector<arch::CcInterval> intervals;  // what require_arch says, as intervals
  // The tier's GPUs the constraint would refuse (with --native-only, those
  // only PTX reaches): the image is not stamped.
  std::vector<std::string> refused_gpus;
};

StampValues stamp_values(const std::vector<inspect::FileReport>& files, bool native_only);

// Deeper than any image config nests (config.Healthcheck.Test is four
// levels): past it the config is refused before it is parsed.
inline constexpr std::size_t k_max_config_depth = 256;

struct StampedConfig {
  std::string json;
  // Entries of config.Env taken out: NVIDIA_DISABLE_REQUIRE, whatever its
  // value (the toolkit skips every NVIDIA_REQUIRE_* check while it is set,
  // and older hooks read its presence alone), as written in the image.
  std::vector<std::string> removed;
};

// The config's JSON with the values set in config.Env (and the labels
// org.orchestrate.stamp.tier and .source); an error for JSON that is no
// image config or nests deeper than k_max_config_depth.
std::expected<StampedConfig, std::string> stamp_config(const std::string& config, const StampValues& values,
                                                       const std::string& tier, const std::string& source);

struct StampRequest {
  std::string image;   // docker://REF or oci://...; empty with `recipe`
  std::string recipe;  // instead of image: the image the recipe made of its current set for the tier
  std::string tier;
  std::filesystem::path config;  // orchestrate.yaml
  std::string tag;               // the new tag; empty: "<tag>-<tier>"
  bool native_only = false;
  std::filesystem::path store_root;  // where the current set of `recipe` is read; empty: the default store
};

// The image `stamp --recipe R --tier T` stamps: the recipe's image for the
// tier, checked to hold the current set of R x T.
struct RecipeImage {
  std::string image;  // docker://REPO:TIER
  digest::Digest set;
  std::optional<digest::Digest> newer;  // a verified set newer by time that is not current
};
// Throws util::Failure: bad_input for an unknown recipe or tier, a recipe
// without `image:`, no verified set, no such image or one holding another
// set; outside_failure when the store or the engine fails.
RecipeImage recipe_image(const StampRequest& request);

struct StampReport {
  ImageReport coverage;
  StampValues values;
  std::string stamped;               // the new image: "repo:tag" (engine) or "oci://.../repo:tag@sha256:..." (registry)
  std::string identity;              // the new image's ID (engine) or manifest digest (registry)
  std::vector<std::string> removed;  // StampedConfig::removed
  bool stamped_ok = false;           // false: refused (coverage.exit_code says why)
  std::optional<RecipeImage> from_recipe;  // with StampRequest::recipe
};

// Throws util::Failure: bad_input for a directory, an unknown tier, a
// digest reference without --tag, content refused; outside_failure when
// the engine or registry fails.
StampReport stamp(const StampRequest& request);

}  // namespace orc::app
