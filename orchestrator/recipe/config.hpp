#pragma once
// orchestrate.yaml: tiers of GPUs and the recipes built for them.
//
//   toolkits: ["11.8", "12.4", "13.0"]    # optional: the toolkits builds may use
//   tiers:
//     tier-new:
//       gpus: ["H100", "RTX 4090", "8.6"] # product names or compute capabilities
//       ptx: highest                      # none | highest | all (default highest)
//       driver: "550.54"                  # optional: oldest driver on the tier's nodes
//   include: ["recipes/*.yaml"]           # optional: one recipe per file
//   remote: http://127.0.0.1:5000/team/artifacts   # optional: the OCI repository push/pull/fetch use
//   trusted_keys: [keys/ci.pub.pem]       # optional: PEM files (or inline PEM) fetch trusts
//   recipes:
//     - name: vision
//       framework: pytorch                # a name of flags::framework_table()
//       source: {path: ../src/vision}     # or {git: URL, ref: v1.2}
//       requires: {cuda: ">=12.1", cudnn: ">=9", pytorch: ">=2.4"}
//       needs: [cublas, nccl]             # optional: CUDA libraries the toolkit must have
//       tiers: [tier-new]
//       build: [["python", "setup.py", "bdist_wheel"]]   # argv lists, or {script: build.sh}
//       artifacts: ["dist/*.whl"]
//       env: {USE_NINJA: "1"}             # optional: variables for every step (tiers take env: too)
//       nvcc: enforce                     # optional: verify (default) or enforce the plan's archs
//
// Relative paths resolve against the directory of the file that names them.
// Every problem is reported with FILE:LINE:COL; nothing is returned unless the
// whole configuration is valid.
#include <expected>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/arch_set.hpp"
#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/compat/toolkit_parts.hpp"
#include "orchestrator/flags/emit.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::recipe {

using PtxPolicy = arch::PtxPolicy;   // none | highest | all
using Framework = flags::Framework;  // one row each in flags::framework_table()

std::string_view framework_name(Framework f);   // "caffe-cmake"
std::string_view ptx_policy_name(PtxPolicy p);  // "highest"
// Frameworks that link cuDNN, so their plans choose a cuDNN release.
bool framework_uses_cudnn(Framework f);

struct TierGpu {
  std::string name;  // canonical product name, or the CC as written ("8.6") when given as a CC
  arch::ComputeCapability cc;
  bool given_as_cc = false;
  bool declared = false;  // {name, cc}: a device the tables lack, named as the user wrote it
  util::SourceLocation where;

  // "H100 (9.0)", or "CC 8.6" for a GPU given as a CC: how messages name it.
  std::string label() const { return given_as_cc ? "CC " + cc.dotted() : name + " (" + cc.dotted() + ")"; }
};

// Where a tier's nodes are in Slurm: what `sbatch` is given for its jobs.
// Unset fields take defaults derived from the tier's GPUs (slurm_defaults in
// app/cluster); `time`, `account` and `qos` are passed as written.
struct TierSlurm {
  std::string partition;
  std::string constraint;  // sbatch --constraint: "sm_90", "sm_80|sm_90"
  std::string gres;        // sbatch --gres: "gpu:h100:1"
  std::string account;
  std::string qos;
  std::string time;  // sbatch --time: "30", "1:00:00"
  util::SourceLocation where;
};
// Where a tier's nodes are in Kubernetes: node labels a Job's nodeSelector
// requires (default: GFD's compute-capability labels of the tier's GPUs).
struct TierKubernetes {
  std::map<std::string, std::string> selector;
  util::SourceLocation where;
};

// One `env:` variable of a tier or a recipe.
struct EnvSetting {
  std::string name;
  std::string value;
  util::SourceLocation where;
};

// What the nvcc front does with an nvcc call whose archs are not the plan's:
// verify refuses it (naming the project line that chose them), enforce
// compiles it for the plan's archs instead.
enum class NvccPolicy { verify, enforce };
std::string_view nvcc_policy_name(NvccPolicy p);

struct Tier {
  std::string name;
  std::vector<TierGpu> gpus;
  PtxPolicy ptx = PtxPolicy::highest;
  std::optional<util::Version> driver;
  std::optional<TierSlurm> slurm;
  std::optional<TierKubernetes> kubernetes;
  std::vector<EnvSetting> env;  // every build step of the tier gets these
  util::SourceLocation where;
};

struct Source {
  enum class Kind { path, git };
  Kind kind = Kind::path;
  std::filesystem::path path;  // absolute, for Kind::path
  std::string url;             // for Kind::git
  std::string ref;             // for Kind::git
  util::SourceLocation where;
};

// A version range with where it was written, so the resolver's reasons can
// point back at it.
struct Requirement {
  util::VersionRange range;
  util::SourceLocation where;
};

struct Requirements {
  std::optional<Requirement> cuda;
  std::optional<Requirement> cudnn;
  std::optional<Requirement> gcc;
  std::optional<Requirement> framework;  // the key named after the recipe's framework ("pytorch: >=2.4")
  bool without_cudnn = false;            // `cudnn: none`: the build uses no cuDNN (Caffe's USE_CUDNN := 0)
};

// A CUDA library of `needs:` and where it was named, so a plan that refuses
// a toolkit lacking it can point back at the line.
struct Need {
  compat::ToolkitPart part;
  util::SourceLocation where;
};

struct BuildStep {
  std::vector<std::string> argv;  // run directly, never through a shell
  std::filesystem::path script;   // or: a script file, absolute, mounted read-only
  util::SourceLocation where;
};

// `watch:`: the base-image repositories and NVIDIA redistributable indexes
// the watcher reads, and the default update policy of recipes.
struct WatchImage {
  std::string url;                // "http://127.0.0.1:5000/nvidia/cuda"; credentials may be in it
  std::string flavour = "devel";  // nvidia/cuda's base, runtime or devel
  std::string os;                 // "ubuntu22.04"; empty: any
  bool cudnn = false;             // the -cudnn tags instead of the plain ones
  util::SourceLocation where;
};
// The image-catalog feed: the Debian archive whose package indexes say what
// our offline images would be made from now.
struct WatchDebian {
  std::string mirror;  // empty: the mirror `images build` uses (the host's apt sources)
  struct Name {
    std::string name;  // "12.4-trixie"
    util::SourceLocation where;
  };
  std::vector<Name> images;  // empty: every offline image recorded here by `images build`
  util::SourceLocation where;
};
struct WatchSettings {
  std::string policy = "patch";  // patch, minor, major or pinned
  std::vector<WatchImage> images;
  std::vector<std::string> redist;  // directory URLs: ".../compute/cuda/redist/"
  std::optional<WatchDebian> debian;
  // A URL that gets one JSON POST per cycle that changed something (a chat
  // webhook's shape). Webhook URLs carry their secret in the path: only its
  // scheme and host are ever printed.
  std::string notify;
  // Verified sets kept per recipe x tier after a cycle that rebuilt (the
  // older ones, and blobs no kept set names, are collected); 0: keep all.
  std::size_t keep = 0;
};

struct Recipe {
  std::string name;
  Framework framework = Framework::cmake;
  Source source;
  Requirements requires_;
  // `needs: [cublas, nccl]`: libraries the build links beyond what every
  // build needs (nvcc, cudart shared and static, libcu++).
  std::vector<Need> needs;
  std::vector<std::string> tiers;
  std::vector<BuildStep> build;
  std::vector<std::string> artifacts;  // globs relative to the build tree
  std::optional<std::string> watch;    // the recipe's update policy; unset: the `watch:` default
  // `image: REPO`: a container engine's build also makes the image
  // REPO:TIER, the build image with the artifacts in /opt/orchestrate/RECIPE;
  // `stamp: true` writes NVIDIA_REQUIRE_CUDA and NVIDIA_REQUIRE_ARCH of the
  // verified artifacts into it (app/stamp/stamp.hpp).
  std::string image;
  bool stamp = false;
  // `env:` variables every build step gets (over the tier's of the same name).
  std::vector<EnvSetting> env;
  NvccPolicy nvcc = NvccPolicy::verify;
  std::filesystem::path file;  // the file it was read from
  util::SourceLocation where;
};

struct Config {
  std::filesystem::path file;
  std::vector<util::Version> toolkits;  // empty = every released toolkit in the table
  std::vector<Tier> tiers;              // in declaration order
  std::vector<Recipe> recipes;          // in declaration order, included files after inline ones
  // The OCI repository URL of `remote:` (empty: none); ORCHESTRATE_REMOTE
  // overrides it. Credentials may be in it, so it is never printed as is.
  std::string remote;
  util::SourceLocation remote_where;
  // `trusted_keys:` items: absolute paths of PEM files (resolved against the
  // config file's directory), or inline PEM text kept as written.
  std::vector<std::string> trusted_keys;
  std::optional<WatchSettings> watch;
  std::vector<util::Diagnostic> warnings;

  const Tier* find_tier(std::string_view name) const;
  const Recipe* find_recipe(std::string_view name) const;
};

// Why `url` cannot be a remote (http(s)://HOST[:PORT]/REPOSITORY, checked by
// shape only); empty when it can. The reason never quotes the URL, which may
// hold a password. `remote:` and ORCHESTRATE_REMOTE are judged alike.
std::string remote_url_problem(std::string_view url);

// Reads and validates a configuration file (and the files it includes).
// On failure returns every error found, each with FILE:LINE:COL.
std::expected<Config, std::vector<util::Diagnostic>> load_config(const std::filesystem::path& file);

// The same from text in memory; `file` names it in diagnostics and its parent
// directory anchors relative paths. Never throws, whatever the input (the
// fuzz target calls this).
std::expected<Config, std::vector<util::Diagnostic>> parse_config(std::string_view text,
                                                                  const std::filesystem::path& file);

}  // namespace orc::recipe
