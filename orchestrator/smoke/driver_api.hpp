#pragma once
// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"), so
// orchestrate has no link-time CUDA dependency and runs (and says so) on
// machines without a GPU. Only the few types and values the runner uses are
// declared, with the values of CUDA 13.0's include/cuda.h; they are part of
// the driver's ABI and have not changed since they were introduced.
#include <expected>
#include <string>

namespace orc::smoke {

namespace cu {

using Result = int;  // CUresult
using Device = int;  // CUdevice
using Context = struct CtxOpaque*;
using Module = struct ModOpaque*;
using Function = struct FuncOpaque*;
using Library = struct LibOpaque*;
using DevicePtr = unsigned long long;  // CUdeviceptr (64-bit)
using Stream = struct StreamOpaque*;

inline constexpr Result k_success = 0;
inline constexpr Result k_error_not_initialized = 3;
inline constexpr Result k_error_no_device = 100;
inline constexpr Result k_error_invalid_image = 200;
inline constexpr Result k_error_no_binary_for_gpu = 209;
inline constexpr Result k_error_invalid_ptx = 218;
inline constexpr Result k_error_jit_compiler_not_found = 221;
inline constexpr Result k_error_unsupported_ptx_version = 222;
inline constexpr Result k_error_jit_compilation_disabled = 223;
inline constexpr Result k_error_not_found = 500;

// CUdevice_attribute
inline constexpr int k_attr_multiprocessor_count = 16;
inline constexpr int k_attr_cc_major = 75;
inline constexpr int k_attr_cc_minor = 76;
inline constexpr int k_attr_cluster_launch = 120;

// CUfunction_attribute
inline constexpr int k_func_ptx_version = 5;
inline constexpr int k_func_binary_version = 6;

// CUjit_option
inline constexpr int k_jit_wall_time = 2;
inline constexpr int k_jit_info_log_buffer = 3;
inline constexpr int k_jit_info_log_buffer_size = 4;
inline constexpr int k_jit_error_log_buffer = 5;
inline constexpr int k_jit_error_log_buffer_size = 6;
inline constexpr int k_jit_log_verbose = 12;

// CUlaunchAttributeID
inline constexpr int k_launch_attr_cluster_dimension = 4;

// CUlaunchAttribute: the id, padding to 8 bytes, a 64-byte value union.
struct LaunchAttribute {
  int id = 0;
  char pad[4] = {};
  union {
    char raw[64];
    struct {
      unsigned x, y, z;
    } cluster_dim;
  } value = {};
};
static_assert(sizeof(LaunchAttribute) == 72);

// CUlaunchConfig
struct LaunchConfig {
  unsigned grid_x = 1, grid_y = 1, grid_z = 1;
  unsigned block_x = 1, block_y = 1, block_z = 1;
  unsigned shared_mem_bytes = 0;
  Stream stream = nullptr;
  LaunchAttribute* attrs = nullptr;
  unsigned num_attrs = 0;
};

}  // namespace cu

// Function pointers resolved from the driver. Entries the header maps to a
// versioned symbol (cuMemAlloc -> cuMemAlloc_v2) are resolved by that name.
// The optional ones (cuLibrary*, cuLaunchKernelEx) are null on drivers older
// than CUDA 12.0 / 11.8; callers check.
struct DriverApi {
  cu::Result (*init)(unsigned flags) = nullptr;
  cu::Result (*driver_get_version)(int* version) = nullptr;
  cu::Result (*device_get_count)(int* count) = nullptr;
  cu::Result (*device_get)(cu::Device* device, int ordinal) = nullptr;
  cu::Result (*device_get_name)(char* name, int length, cu::Device device) = nullptr;
  cu::Result (*device_get_attribute)(int* value, int attribute, cu::Device device) = nullptr;
  cu::Result (*primary_ctx_retain)(cu::Context* ctx, cu::Device device) = nullptr;
  cu::Result (*primary_ctx_release)(cu::Device device) = nullptr;
  cu::Result (*ctx_set_current)(cu::Context ctx) = nullptr;
  cu::Result (*ctx_synchronize)() = nullptr;
  cu::Result (*module_load_data_ex)(cu::Module* module, const void* image, unsigned num_options, int* options,
                                    void** values) = nullptr;
  cu::Result (*module_unload)(cu::Module module) = nullptr;
  cu::Result (*module_get_function)(cu::Function* function, cu::Module module, const char* name) = nullptr;
  cu::Result (*func_get_attribute)(int* value, int attribute, cu::Function function) = nullptr;
  cu::Result (*mem_alloc)(cu::DevicePtr* ptr, std::size_t bytes) = nullptr;
  cu::Result (*mem_free)(cu::DevicePtr ptr) = nullptr;
  cu::Result (*memcpy_htod)(cu::DevicePtr dst, const void* src, std::size_t bytes) = nullptr;
  cu::Result (*memcpy_dtoh)(void* dst, cu::DevicePtr src, std::size_t bytes) = nullptr;
  cu::Result (*launch_kernel)(cu::Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shared, cu::Stream stream, void** params, void** extra) = nullptr;
  cu::Result (*get_error_name)(cu::Result error, const char** name) = nullptr;
  // Optional.
  cu::Result (*launch_kernel_ex)(const cu::LaunchConfig* config, cu::Function f, void** params, void** extra) = nullptr;
  cu::Result (*library_load_data)(cu::Library* library, const void* code, int* jit_options, void** jit_values,
                                  unsigned num_jit, int* lib_options, void** lib_values, unsigned num_lib) = nullptr;
  cu::Result (*library_unload)(cu::Library library) = nullptr;
  cu::Result (*library_get_module)(cu::Module* module, cu::Library library) = nullptr;

  // "CUDA_ERROR_NO_BINARY_FOR_GPU", or "CUresult N" when the driver has no name.
  std::string error_name(cu::Result r) const;
};

struct DriverLoadError {
  enum class Kind { no_library, missing_symbol };
  Kind kind = Kind::no_library;
  std::string message;  // "no NVIDIA driver on this machine (libcuda.so.1: cannot open ...)"
};

// dlopens `soname` (kept open for the life of the process: the driver does
// not support being unloaded) and resolves every required symbol.
std::expected<DriverApi, DriverLoadError> load_driver(const std::string& soname = "libcuda.so.1");

// The kernel module's driver release ("580.159.04") from
// /proc/driver/nvidia/version, or empty when it cannot be read.
std::string kernel_driver_version(const std::string& proc_file = "/proc/driver/nvidia/version");
// The release in the text of that file: the word after "Kernel Module".
std::string parse_kernel_driver_version(std::string_view text);

}  // namespace orc::smoke
