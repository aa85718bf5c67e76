#pragma once
// The CUDA libraries this tool knows by name: one table that the bill of
// materials (bom.hpp), a file's links and a set's needs (needs.hpp) all read.
//
// A library is known by its soname stem ("libcublas.so"), or for a family
// of sibling libraries by a prefix of it ("libcudnn_" for libcudnn_ops.so.9,
// "libnpp" for libnppc.so.13 and libnppif.so.13). The major a node needs is
// the soname's: libcublas.so.13 is cuBLAS 13, libcufft.so.12 is cuFFT 12
// (CUDA 13.0 ships it), libcudnn.so.9 cuDNN 9, libnccl.so.2 NCCL 2.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orc::inspect {

// Who puts the library on a node.
enum class Provider {
  toolkit,  // a CUDA toolkit library: the image (or the set) must carry it
  product,  // shipped apart from the toolkit (cuDNN, NCCL, TensorRT, ...): the same
  driver,   // the driver's: the NVIDIA container toolkit mounts the host's
};

struct CudaLibrary {
  std::string_view key;     // "cublas"
  std::string_view name;    // "cuBLAS"
  std::string_view stem;    // "libcublas.so"
  std::string_view family;  // sibling stems start with this ("libcudnn_"); empty for none
  Provider provider = Provider::toolkit;
  // Where a bill of materials finds its version besides the file name.
  std::vector<std::string_view> packages;  // dpkg package name prefixes
  std::string_view wheel;                  // pip project prefix ("nvidia-cublas")
  std::string_view json_key;               // the key in NVIDIA's version.json
};

// Every row, in the order reports list them.
const std::vector<CudaLibrary>& cuda_libraries();

// The row a soname stem belongs to ("libcudnn_ops.so" -> cuDNN); null for
// a library this table does not know.
const CudaLibrary* cuda_library_of_stem(std::string_view stem);

// A CUDA library named in a DT_NEEDED entry (or a DT_SONAME).
struct LinkedLibrary {
  const CudaLibrary* library = nullptr;  // a row of cuda_libraries()
  std::string soname;                    // "libcublas.so.13"
  std::optional<int> major;              // 13; none for an unversioned name ("libcublas.so")
  bool operator==(const LinkedLibrary&) const = default;
};

// "libcublas.so.13" -> cuBLAS, 13; nullopt for a library that is not a
// known CUDA library ("libc.so.6", "libfoo.so.1").
std::optional<LinkedLibrary> classify_soname(std::string_view soname);

// "cuBLAS 13"; "cuBLAS" without a major.
std::string describe(const LinkedLibrary& library);

}  // namespace orc::inspect
