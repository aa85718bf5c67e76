#pragma once
// The CUDA toolkits installed on this machine, for the host engine. Sites
// keep several side by side (/usr/local/cuda-11.8 next to cuda-12.4, module
// trees, Debian's toolkits unpacked by scripts/install-cuda-toolkits.sh), so
// the host engine plans with every one it finds rather than only the one
// /usr/local/cuda points at.
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "orchestrator/compat/toolkit_parts.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::site {

struct HostToolkit {
  util::Version version;               // as nvcc --version reports it: 13.0.88
  std::filesystem::path root;          // ROOT/bin/nvcc
  std::string found_by;                // "ORCHESTRATE_HOST_TOOLKITS", "PATH", "/usr/local/cuda", ...
  compat::ToolkitInventory inventory;  // what the tree lacks of compat's part table
};

// Where to look, in order; the first root found for a toolkit wins.
struct HostToolkitSearch {
  // Toolkit roots (ROOT/bin/nvcc) or folders of them (DIR/cuda-*/bin/nvcc).
  std::vector<std::filesystem::path> listed;
  std::vector<std::filesystem::path> path_dirs;  // PATH, for a bare nvcc
  std::filesystem::path default_root;            // ORCHESTRATE_HOST_CUDA, else /usr/local/cuda
  std::filesystem::path versioned_parent;        // /usr/local: its cuda-X.Y folders
  std::filesystem::path version_cache;           // nvcc_version()'s file; empty: run every nvcc
};

// ORCHESTRATE_HOST_TOOLKITS (colon-separated), PATH, ORCHESTRATE_HOST_CUDA
// or /usr/local/cuda, /usr/local/cuda-*; versions remembered in nvcc_version_cache().
HostToolkitSearch host_toolkit_search_from_environment();

// Every toolkit found, one per canonical root, newest version first. Each
// root's nvcc is run once (`nvcc --version`); one that does not run or says
// nothing readable is left out. Each carries what its tree lacks
// (inspect_toolkit_tree).
std::vector<HostToolkit> discover_host_toolkits(const HostToolkitSearch& search);

// What `ROOT/bin/nvcc --version` says, remembered across runs in
// `cache_file` (empty: not remembered) by the nvcc file's identity (device,
// inode, size, modification and change times): a no-op build need not run
// nvcc again, and a replaced or touched nvcc is run afresh. nullopt when
// there is no nvcc, it fails, or it says nothing readable.
std::optional<util::Version> nvcc_version(const std::filesystem::path& root, const std::filesystem::path& cache_file);

// The file nvcc_version remembers in: nvcc-versions.v1 in the local store's root.
std::filesystem::path nvcc_version_cache();

// What a toolkit tree at `root` lacks of every part in compat's table, from
// its file layout alone: programs under bin/, libraries under lib64/, lib/,
// targets/x86_64-linux/lib/, extras/CUPTI/lib64/, headers under include/,
// include/cccl/, targets/x86_64-linux/include/ (and its cccl/),
// extras/CUPTI/include/. A link that points nowhere is missing.
compat::ToolkitInventory inspect_toolkit_tree(const std::filesystem::path& root);

// The newest toolkit of `toolkits` with the major.minor of `wanted` that
// lacks none of `needed` (empty: any).
std::optional<HostToolkit> find_host_toolkit(const std::vector<HostToolkit>& toolkits, const util::Version& wanted,
                                             std::span<const compat::ToolkitPart> needed = {});

// "13.0.88 (/usr/local/cuda-13.0), 11.8.89 (toolchains/cuda-11.8)"; "none".
std::string describe_host_toolkits(const std::vector<HostToolkit>& toolkits);

}  // namespace orc::site
