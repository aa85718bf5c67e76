#pragma once
// Where in a project its arch choice was written: the line of a CMake
// file, Makefile, setup.py or script that names the archs an nvcc call
// asked for, or that probes the build machine's GPU. Read only when a
// call deviates from the plan, so a project pays nothing when it does not.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/front/nvcc_args.hpp"

namespace orc::front {

struct Origin {
  std::string file;  // relative to the project root
  int line = 0;      // 1-based
  std::string text;  // the line, trimmed, at most 160 characters
  // "file:line: text"
  std::string str() const;
};

// Limits of the search: files looked at, bytes read per file, depth.
struct OriginLimits {
  std::size_t max_files = 4000;
  std::uintmax_t max_file_bytes = 1 << 20;
  int max_depth = 8;
};

// The line that best explains `call`'s archs: a CMake
// CMAKE_CUDA_ARCHITECTURES / CUDA_ARCHITECTURES setting, a -gencode or
// -arch in a Makefile or script, TORCH_CUDA_ARCH_LIST in setup.py, scored
// by how many of the asked CC numbers it names; when no line names them (a
// variable carried them), the first find_arch_settings() line that writes
// an nvcc arch option, else its first line. Build trees (a CMakeCache.txt
// beside them) and .git are skipped.
std::optional<Origin> find_arch_origin(const std::filesystem::path& root, const NvccCall& call,
                                       const OriginLimits& limits = {});

// Lines where a project chooses its own archs, whatever the build asks: a
// CMAKE_CUDA_ARCHITECTURES set() (not one guarded by `if(NOT DEFINED ...)`
// or `if(NOT CMAKE_CUDA_ARCHITECTURES)`), a CUDA_ARCHITECTURES property,
// -gencode / -arch=sm_XY / -arch=native in a Makefile, script or setup.py,
// a GPU probe (__nvcc_device_query, nvidia-smi --query-gpu=compute_cap).
// First ones first, at most `max`. What `orchestrate plan` warns about.
std::vector<Origin> find_arch_settings(const std::filesystem::path& root, std::size_t max = 3,
                                       const OriginLimits& limits = {});

// The lines that run `tool` (a GPU probe: "__nvcc_device_query",
// "nvidia-smi", "-arch=native"), first ones first, at most `max`.
std::vector<Origin> find_tool_uses(const std::filesystem::path& root, std::string_view tool, std::size_t max = 3,
                                   const OriginLimits& limits = {});

}  // namespace orc::front
