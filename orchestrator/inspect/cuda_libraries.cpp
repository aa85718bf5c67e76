#include "orchestrator/inspect/cuda_libraries.hpp"

#include <algorithm>
#include <charconv>

#include "orchestrator/inspect/bom.hpp"

namespace orc::inspect {

// NVIDIA's package names: cuda-cudart-12-4, libcublas-12-4, libcudnn9-cuda-12,
// libnccl2, libnpp-13-0; wheels nvidia-cublas-cu12, nvidia-cudnn-cu12 (CUDA
// 13's drop the suffix). version.json keys as NVIDIA's redistributable layout
// has them. Rows sharing a stem's prefix ("libcufft.so", "libcufftw.so") are
// told apart by the whole stem, so the order only orders reports.
const std::vector<CudaLibrary>& cuda_libraries() {
  using enum Provider;
  // A row a line reads as the table it is.
  // clang-format off
  static const std::vector<CudaLibrary> table = {
    {"cudart", "CUDA runtime", "libcudart.so", "", toolkit, {"cuda-cudart-"}, "nvidia-cuda-runtime", "cuda_cudart"},
    {"cublas", "cuBLAS", "libcublas.so", "", toolkit, {"libcublas-"}, "nvidia-cublas", "libcublas"},
    {"cublaslt", "cuBLASLt", "libcublasLt.so", "", toolkit, {"libcublas-"}, "nvidia-cublas", "libcublas"},
    {"cudnn", "cuDNN", "libcudnn.so", "libcudnn_", product, {"libcudnn"}, "nvidia-cudnn", ""},
    {"nccl", "NCCL", "libnccl.so", "", product, {"libnccl"}, "nvidia-nccl", ""},
    {"cufft", "cuFFT", "libcufft.so", "", toolkit, {"libcufft-"}, "nvidia-cufft", "libcufft"},
    {"cufftw", "cuFFTW", "libcufftw.so", "", toolkit, {"libcufft-"}, "nvidia-cufft", "libcufft"},
    {"curand", "cuRAND", "libcurand.so", "", toolkit, {"libcurand-"}, "nvidia-curand", "libcurand"},
    {"cusparse", "cuSPARSE", "libcusparse.so", "", toolkit, {"libcusparse-"}, "nvidia-cusparse", "libcusparse"},
    {"cusparselt", "cuSPARSELt", "libcusparseLt.so", "", product, {"libcusparselt"}, "nvidia-cusparselt", ""},
    {"cusolver", "cuSOLVER", "libcusolver.so", "", toolkit, {"libcusolver-"}, "nvidia-cusolver", "libcusolver"},
    {"cusolvermg", "cuSOLVERMg", "libcusolverMg.so", "", toolkit, {"libcusolver-"}, "nvidia-cusolver", "libcusolver"},
    {"nvrtc", "NVRTC", "libnvrtc.so", "", toolkit, {"cuda-nvrtc-"}, "nvidia-cuda-nvrtc", "cuda_nvrtc"},
    {"nvjitlink", "nvJitLink", "libnvJitLink.so", "", toolkit, {"libnvjitlink-"}, "nvidia-nvjitlink", "libnvjitlink"},
    {"npp", "NPP", "libnppc.so", "libnpp", toolkit, {"libnpp-"}, "nvidia-npp", "libnpp"},
    {"nvjpeg", "nvJPEG", "libnvjpeg.so", "", toolkit, {"libnvjpeg-"}, "nvidia-nvjpeg", "libnvjpeg"},
    {"cufile", "cuFile", "libcufile.so", "", toolkit, {"libcufile-"}, "nvidia-cufile", "libcufile"},
    {"cupti", "CUPTI", "libcupti.so", "", toolkit, {"cuda-cupti-"}, "nvidia-cuda-cupti", "cuda_cupti"},
    {"nvtx", "NVTX", "libnvToolsExt.so", "", toolkit, {"cuda-nvtx-"}, "nvidia-nvtx", "cuda_nvtx"},
    {"cutensor", "cuTENSOR", "libcutensor.so", "", product, {"libcutensor"}, "cutensor", ""},
    {"tensorrt", "TensorRT", "libnvinfer.so", "", product, {"libnvinfer"}, "tensorrt", ""},
    {"libcuda", "CUDA driver (libcuda)", "libcuda.so", "", driver, {}, "", ""},
    {"nvml", "NVML", "libnvidia-ml.so", "", driver, {}, "", ""},
  };
  // clang-format on
  return table;
}

const CudaLibrary* cuda_library_of_stem(std::string_view stem) {
  const auto& table = cuda_libraries();
  const auto exact = std::ranges::find(table, stem, &CudaLibrary::stem);
  if (exact != table.end()) return &*exact;
  const auto sibling = std::ranges::find_if(
      table, [&](const CudaLibrary& row) { return !row.family.empty() && stem.starts_with(row.family); });
  return sibling == table.end() ? nullptr : &*sibling;
}

std::optional<LinkedLibrary> classify_soname(std::string_view soname) {
  // A DT_NEEDED name is a file name, never a path in practice; a path's
  // last component is what the loader compares all the same.
  if (const auto slash = soname.rfind('/'); slash != std::string_view::npos) soname = soname.substr(slash + 1);
  if (soname.ends_with(".so")) {
    const CudaLibrary* row = cuda_library_of_stem(soname);
    if (!row) return std::nullopt;
    return LinkedLibrary{row, std::string(soname), std::nullopt};
  }
  const auto split = split_soname(soname);
  if (!split) return std::nullopt;
  const CudaLibrary* row = cuda_library_of_stem(split->stem);
  if (!row) return std::nullopt;
  int major = 0;
  const std::string_view digits = std::string_view(split->version).substr(0, split->version.find('.'));
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), major);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return LinkedLibrary{row, std::string(soname), major};
}

std::string describe(const LinkedLibrary& library) {
  std::string out(library.library->name);
  if (library.major) out += " " + std::to_string(*library.major);
  return out;
}

}  // namespace orc::inspect
