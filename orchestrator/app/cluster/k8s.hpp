#pragma once
// `orchestrate k8s render TIER [--recipe R]` (issue 15): batch/v1 Jobs that
// build each recipe for the tier and smoke-test its newest verified set on
// the tier's nodes. A build Job runs anywhere (no GPU) in the plan's build
// image, with this tool copied in by an init container from the tool's own
// image; a smoke Job runs the tool's image on a node the tier's selector
// (its `kubernetes: selector`, else GPU Feature Discovery's
// nvidia.com/gpu.compute.major/minor labels of one of its compute
// capabilities) picks, asks for one nvidia.com/gpu, and carries
// NVIDIA_REQUIRE_CUDA and NVIDIA_REQUIRE_ARCH made from the set's embedded
// archs, so the NVIDIA container toolkit refuses a node the set cannot run
// on; the CUDA libraries the set links and does not carry are named on the
// smoke Job, whose image must provide them. Registry credentials come from a Secret by reference, never inline.
//
// Every build Job applies as rendered (k8s_deploy.hpp): its image is a
// registry image (an offline image by the digest `images push` recorded),
// and a local source is a signed snapshot on the remote the Job fetches
// and checks before it builds (`--push` ships what the remote lacks).
// What cannot reach a pod is an error (exit 2) naming the command that
// fixes it, never a comment.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/cache/manifest.hpp"

namespace orc::app {

// Which Jobs to render: both kinds, or only one (smoke Jobs for sets built
// elsewhere, Slurm or a workstation, need neither a build image nor a
// shipped source).
enum class K8sOnly { all, build, smoke };

struct K8sRenderRequest {
  std::filesystem::path config;
  std::string tier;
  std::vector<std::string> recipes;               // empty: every recipe of the tier
  std::filesystem::path store_root;               // the sets smoke Jobs test; empty: the default store
  std::string tool_image = "orchestrate:latest";  // docker/Dockerfile's image, in a registry the cluster pulls from
  std::string namespace_;                         // empty: the context's
  std::string registry_secret = "orchestrate-registry";  // holds `remote`: the remote URL with its credentials
  std::string pull_secret;                               // imagePullSecrets; empty: none
  std::string config_map = "orchestrate-config";         // holds orchestrate.yaml
  bool push = false;                                     // ship the local sources the remote lacks (signed snapshots)
  std::filesystem::path image_state;                     // site/image_state.hpp's file; empty: the default
  K8sOnly only = K8sOnly::all;
};

struct K8sJob {
  std::string name;  // metadata.name
  std::string work;  // "build" or "smoke"
  std::string recipe;
  std::string tier;
  std::string image;
  std::map<std::string, std::string> node_selector;
  std::string require_cuda;  // NVIDIA_REQUIRE_CUDA (smoke)
  std::string require_arch;  // NVIDIA_REQUIRE_ARCH (smoke)
  std::string set;           // the set a smoke Job tests
  std::string source;        // the source snapshot a build Job fetches (sha256:...); empty: none
  // The CUDA libraries the set links and does not carry (its manifest's):
  // the smoke Job's image must provide them; an annotation names them.
  std::vector<cache::LibraryNeed> needs;
};

struct K8sRender {
  std::vector<K8sJob> jobs;
  std::vector<std::string> notes;    // what was not rendered, and why (YAML comments)
  std::vector<std::string> shipped;  // the source snapshots --push sent
  std::string yaml;                  // the manifests, "---"-separated
};

// Throws util::Failure: bad_input for an unknown tier or recipe, and for a
// build Job whose image or source a pod cannot reach (every one named, with
// its fix); outside_failure when the registry fails.
K8sRender k8s_render(const K8sRenderRequest& request);

// "orc-build-saxpy-tier-new": a DNS-1123 label (lower case, digits, '-'; at
// most 63, a hash of the whole kept when cut).
std::string k8s_name(const std::string& text);

}  // namespace orc::app
