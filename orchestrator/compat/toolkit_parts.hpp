#pragma once
// The parts of a CUDA toolkit a build may need, in one table that recipe
// `needs:` validation (and its did-you-mean), toolkit discovery, the image
// catalog and the resolver all read. A toolkit tree that has nvcc but lacks
// libcudart.so or the libcu++ headers cannot build an ordinary project
// (CMake's FindCUDAToolkit: "missing: CUDA_CUDART"; cooperative_groups:
// "cuda/std/type_traits: No such file or directory"), so such a tree is
// refused rather than planned with.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/util/version.hpp"

namespace orc::compat {

enum class ToolkitPart {
  nvcc,
  cudart,         // libcudart.so: what CMake's CUDA::cudart and `nvcc -cudart shared` link
  cudart_static,  // libcudart_static.a: what a plain `nvcc -o` links
  libcudacxx,     // libcu++ (cuda/std/...), which cooperative_groups, CUB and Thrust include
  cublas,
  cublasLt,
  cufft,
  curand,
  cusparse,
  cusolver,
  npp,
  nvjpeg,
  nvrtc,
  nvjitlink,
  cupti,
  cudnn,
  nccl,
};

struct ToolkitPartInfo {
  ToolkitPart part;
  std::string_view name;   // what `needs:` says: "cublas"
  std::string_view label;  // how messages say it: "cuBLAS"
  // Every build needs it; a recipe cannot name it in `needs:` (it is implied).
  bool always = false;
  // What shows it is there: files under the toolkit's library folders
  // (lib64, lib, targets/x86_64-linux/lib, extras/CUPTI/lib64), headers under
  // its include folders (include, include/cccl, targets/x86_64-linux/include
  // and its cccl, extras/CUPTI/include), programs under bin. Every one must
  // be there.
  std::vector<std::string_view> programs;
  std::vector<std::string_view> libraries;
  std::vector<std::string_view> headers;
};

std::span<const ToolkitPartInfo> toolkit_part_table();
const ToolkitPartInfo& part_info(ToolkitPart part);
// By `needs:` name, exactly ("cublasLt" and "cublaslt" both name cublasLt).
const ToolkitPartInfo* find_part(std::string_view name);
// The names a recipe may give in `needs:`, in table order (for did-you-mean).
std::vector<std::string_view> declarable_part_names();

// What a build with `declared` needs: the parts every build needs, then the
// declared ones (cuBLAS brings cuBLASLt, which libcublas.so loads).
std::vector<ToolkitPart> parts_needed(std::span<const ToolkitPart> declared);

// One part a toolkit lacks, with the files that were looked for and not found.
struct MissingPart {
  ToolkitPart part;
  std::vector<std::string> files;  // "lib64/libcudart.so", "include/cuda/std/type_traits"
  std::string describe() const;    // "cuBLAS (libcublas.so, cublas_v2.h)"
};

// What a toolkit tree or an image holds, as the parts it lacks.
struct ToolkitInventory {
  std::vector<MissingPart> missing;
  bool lacks(ToolkitPart part) const;
  // The parts of `needed` it lacks, in `needed`'s order.
  std::vector<const MissingPart*> lacking(std::span<const ToolkitPart> needed) const;
  bool complete() const;  // lacks none of the parts every build needs
};

// "cuBLAS (libcublas.so), cuFFT (libcufft.so, cufft.h)".
std::string describe_missing(const std::vector<const MissingPart*>& missing);

// A candidate toolkit the resolver must pass over, and why (the parts it
// lacks and which recipe line needs them): "the one at toolchains/cuda-12.4
// lacks cuFFT (libcufft.so), which recipes/x.yaml:9:10 needs".
struct ToolkitShortfall {
  util::Version toolkit;  // compared by major.minor
  std::string reason;
};

}  // namespace orc::compat
