#pragma once
// Per framework, what a build runs: its environment, its steps (argv lists,
// never text for a shell) and the files it needs, from one plan entry.
//
// The build's file system, the same for every engine (the host engine maps
// these paths to real ones):
//   /src         a scratch copy of the source, writable; every step starts here
//   /build       an empty build directory (the default CMake build tree)
//   /orc/steps   recipe script steps, read-only, each run as `bash /orc/steps/NAME`
//   /orc/bazel   bazel's output root, kept between builds (tensorflow)
//   /orc/front   the nvcc front: bin/nvcc (first on PATH, and CUDACXX),
//                bin/__nvcc_device_query, bin/nvidia-smi, front.conf, and
//                the call log calls.jsonl (front/front.hpp)
//   /orc/home    HOME, empty at the start of every build
//
// Every step gets the same fixed environment, whatever the shell that ran
// orchestrate held: PATH (the front, the toolkit's bin, the system's),
// HOME, LANG=C, CUDA_HOME, CUDACXX, the plan's variables, the parallelism
// ones, then the tier's `env:` and the recipe's (which wins).
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/engine/engine.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::app {

inline constexpr std::string_view k_src_dir = "/src";
inline constexpr std::string_view k_build_dir = "/build";
inline constexpr std::string_view k_steps_dir = "/orc/steps";
inline constexpr std::string_view k_bazel_dir = "/orc/bazel";
inline constexpr std::string_view k_front_dir = "/orc/front";
inline constexpr std::string_view k_home_dir = "/orc/home";
// The file in a workspace that remembers the archs of bazel's last configure.
inline constexpr std::string_view k_bazel_fingerprint_file = "bazel-arch-fingerprint";

enum class BuildPlace { container, host };
enum class CmakeGenerator { ninja, makefiles };

struct DriverInput {
  const PlanEntry* plan = nullptr;
  const recipe::Recipe* recipe = nullptr;
  BuildPlace place = BuildPlace::container;
  std::string cuda_home = "/usr/local/cuda";  // in the build's file system
  unsigned jobs = 1;
  CmakeGenerator generator = CmakeGenerator::makefiles;
  std::filesystem::path source_dir;  // the source tree on the host (caffe reads Makefile.config.example)
  std::filesystem::path workspace;   // kept between builds (bazel output root and fingerprint)
};

struct FileToWrite {
  std::filesystem::path relative;  // under the scratch source copy
  std::string text;
};

struct DriverPlan {
  std::vector<std::pair<std::string, std::string>> env;
  // Run before the steps and left out of the cache key: they depend on the
  // workspace's state, not on what is built (bazel clean --expunge).
  std::vector<std::vector<std::string>> pre_steps;
  std::vector<std::vector<std::string>> steps;
  std::vector<engine::Mount> mounts;  // scripts and caches; /src and /build are the caller's
  std::vector<FileToWrite> files;
  std::vector<std::string> notes;  // lines for the build log, saying what was decided and why
  // Written to the workspace once the build succeeded (tensorflow).
  std::optional<std::string> bazel_fingerprint;
};

// Errors: a framework with no default steps and none in the recipe (nvcc),
// caffe without Makefile.config.example.
std::expected<DriverPlan, std::string> plan_driver(const DriverInput& input);

// Caffe's Makefile.config from Makefile.config.example: the CUDA_ARCH
// assignment (with its backslash-continued lines) replaced by `cuda_arch`,
// CUDA_DIR set to `cuda_dir`; commented lines and everything else kept. An
// example without a CUDA_ARCH assignment gets one appended.
std::string rewrite_caffe_makefile_config(std::string_view example, std::string_view cuda_arch,
                                          std::string_view cuda_dir);

// The variables bazel's CUDA configuration reads, as one line; equal
// fingerprints mean bazel's cached configure still matches.
std::string bazel_arch_fingerprint(const flags::TensorflowVars& vars);
// Why the workspace must be expunged, or nullopt when it need not: a
// workspace never configured needs nothing; a different fingerprint does.
std::optional<std::string> bazel_expunge_reason(const std::optional<std::string>& last, std::string_view now);
std::optional<std::string> read_bazel_fingerprint(const std::filesystem::path& workspace);

}  // namespace orc::app
