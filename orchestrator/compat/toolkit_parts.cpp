#include "orchestrator/compat/toolkit_parts.hpp"

#include <algorithm>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::compat {

namespace {

using P = ToolkitPart;

// The files each part's development package installs (the runtime soname
// alone does not link: `-lcublas` needs libcublas.so), and the header its
// users include first. Checked against CUDA 13.0 at /usr/local/cuda (headers
// under targets/x86_64-linux/include, libcu++ under include/cccl) and
// Debian's nvidia-cuda-dev / libcu++-dev 11.8 and 12.4.
const std::vector<ToolkitPartInfo>& table() {
  static const std::vector<ToolkitPartInfo> rows = {
      {P::nvcc, "nvcc", "nvcc", true, {"nvcc"}, {}, {"cuda_runtime.h"}},
      {P::cudart, "cudart", "the shared CUDA runtime", true, {}, {"libcudart.so"}, {}},
      {P::cudart_static, "cudart_static", "the static CUDA runtime", true, {}, {"libcudart_static.a"}, {}},
      {P::libcudacxx, "libcu++", "libcu++", true, {}, {}, {"cuda/std/type_traits"}},
      {P::cublas, "cublas", "cuBLAS", false, {}, {"libcublas.so"}, {"cublas_v2.h"}},
      {P::cublasLt, "cublasLt", "cuBLASLt", false, {}, {"libcublasLt.so"}, {"cublasLt.h"}},
      {P::cufft, "cufft", "cuFFT", false, {}, {"libcufft.so"}, {"cufft.h"}},
      {P::curand, "curand", "cuRAND", false, {}, {"libcurand.so"}, {"curand.h"}},
      {P::cusparse, "cusparse", "cuSPARSE", false, {}, {"libcusparse.so"}, {"cusparse.h"}},
      {P::cusolver, "cusolver", "cuSOLVER", false, {}, {"libcusolver.so"}, {"cusolverDn.h"}},
      {P::npp, "npp", "NPP", false, {}, {"libnppc.so"}, {"npp.h"}},
      {P::nvjpeg, "nvjpeg", "nvJPEG", false, {}, {"libnvjpeg.so"}, {"nvjpeg.h"}},
      {P::nvrtc, "nvrtc", "NVRTC", false, {}, {"libnvrtc.so"}, {"nvrtc.h"}},
      {P::nvjitlink, "nvjitlink", "nvJitLink", false, {}, {"libnvJitLink.so"}, {"nvJitLink.h"}},
      {P::cupti, "cupti", "CUPTI", false, {}, {"libcupti.so"}, {"cupti.h"}},
      {P::cudnn, "cudnn", "cuDNN", false, {}, {"libcudnn.so"}, {"cudnn.h"}},
      {P::nccl, "nccl", "NCCL", false, {}, {"libnccl.so"}, {"nccl.h"}},
  };
  return rows;
}

}  // namespace

std::span<const ToolkitPartInfo> toolkit_part_table() { return table(); }

const ToolkitPartInfo& part_info(ToolkitPart part) {
  for (const auto& row : table())
    if (row.part == part) return row;
  throw util::Failure(util::ExitCode::bad_input, "toolkit part table: a part has no row");
}

const ToolkitPartInfo* find_part(std::string_view name) {
  for (const auto& row : table())
    if (row.name == name || util::to_lower(row.name) == name) return &row;
  return nullptr;
}

std::vector<std::string_view> declarable_part_names() {
  std::vector<std::string_view> names;
  for (const auto& row : table())
    if (!row.always) names.push_back(row.name);
  return names;
}

std::vector<ToolkitPart> parts_needed(std::span<const ToolkitPart> declared) {
  std::vector<ToolkitPart> out;
  const auto add = [&](ToolkitPart p) {
    if (std::ranges::find(out, p) == out.end()) out.push_back(p);
  };
  for (const auto& row : table())
    if (row.always) add(row.part);
  for (const ToolkitPart p : declared) {
    add(p);
    if (p == P::cublas) add(P::cublasLt);
  }
  return out;
}

std::string MissingPart::describe() const {
  return std::string(part_info(part).label) + " (" + util::join(files, ", ") + ")";
}

bool ToolkitInventory::lacks(ToolkitPart part) const {
  return std::ranges::any_of(missing, [&](const MissingPart& m) { return m.part == part; });
}

std::vector<const MissingPart*> ToolkitInventory::lacking(std::span<const ToolkitPart> needed) const {
  std::vector<const MissingPart*> out;
  for (const ToolkitPart p : needed)
    for (const auto& m : missing)
      if (m.part == p) out.push_back(&m);
  return out;
}

bool ToolkitInventory::complete() const { return lacking(parts_needed({})).empty(); }

std::string describe_missing(const std::vector<const MissingPart*>& missing) {
  std::vector<std::string> parts;
  for (const MissingPart* m : missing) parts.push_back(m->describe());
  return util::join(parts, ", ");
}

}  // namespace orc::compat
