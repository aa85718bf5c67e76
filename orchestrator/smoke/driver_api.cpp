#include "orchestrator/smoke/driver_api.hpp"
#include "orchestrator/util/fs.hpp"

#include <dlfcn.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

namespace orc::smoke {

namespace {

// Resolves the first of `names` the library exports; the names are those
// cuda.h's #defines map the API to (cuMemAlloc -> cuMemAlloc_v2), newest first.
template <typename Fn>
bool resolve(void* handle, Fn& slot, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = ::dlsym(handle, name)) {
      slot = reinterpret_cast<Fn>(symbol);
      return true;
    }
  }
  return false;
}

}  // namespace

std::string DriverApi::error_name(cu::Result r) const {
  const char* name = nullptr;
  if (get_error_name && get_error_name(r, &name) == cu::k_success && name) return name;
  return "CUresult " + std::to_string(r);
}

std::expected<DriverApi, DriverLoadError> load_driver(const std::string& soname) {
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    return std::unexpected(DriverLoadError{
        DriverLoadError::Kind::no_library,
        "no NVIDIA driver on this machine (" + (why ? std::string(why) : soname + " cannot be loaded") + ")"});
  }
  DriverApi api;
  std::vector<std::string> missing;
  const auto need = [&](auto& slot, std::initializer_list<const char*> names) {
    if (!resolve(handle, slot, names)) missing.emplace_back(*names.begin());
  };
  need(api.init, {"cuInit"});
  need(api.driver_get_version, {"cuDriverGetVersion"});
  need(api.device_get_count, {"cuDeviceGetCount"});
  need(api.device_get, {"cuDeviceGet"});
  need(api.device_get_name, {"cuDeviceGetName"});
  need(api.device_get_attribute, {"cuDeviceGetAttribute"});
  need(api.primary_ctx_retain, {"cuDevicePrimaryCtxRetain"});
  need(api.primary_ctx_release, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
  need(api.ctx_set_current, {"cuCtxSetCurrent"});
  need(api.ctx_synchronize, {"cuCtxSynchronize"});
  need(api.module_load_data_ex, {"cuModuleLoadDataEx"});
  need(api.module_unload, {"cuModuleUnload"});
  need(api.module_get_function, {"cuModuleGetFunction"});
  need(api.func_get_attribute, {"cuFuncGetAttribute"});
  need(api.mem_alloc, {"cuMemAlloc_v2"});
  need(api.mem_free, {"cuMemFree_v2"});
  need(api.memcpy_htod, {"cuMemcpyHtoD_v2"});
  need(api.memcpy_dtoh, {"cuMemcpyDtoH_v2"});
  need(api.launch_kernel, {"cuLaunchKernel"});
  need(api.get_error_name, {"cuGetErrorName"});
  resolve(handle, api.launch_kernel_ex, {"cuLaunchKernelEx"});
  resolve(handle, api.library_load_data, {"cuLibraryLoadData"});
  resolve(handle, api.library_unload, {"cuLibraryUnload"});
  resolve(handle, api.library_get_module, {"cuLibraryGetModule"});
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return std::unexpected(DriverLoadError{DriverLoadError::Kind::missing_symbol,
                                           soname + " lacks " + list + ": not a CUDA driver this tool can use"});
  }
  return api;
}

std::string parse_kernel_driver_version(std::string_view text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue ..."
  constexpr std::string_view k_marker = "Kernel Module";
  const auto at = text.find(k_marker);
  if (at == std::string_view::npos) return {};
  std::istringstream words{std::string(text.substr(at + k_marker.size()))};
  std::string version;
  words >> version;
  if (version.empty() || !std::isdigit(static_cast<unsigned char>(version.front()))) return {};
  return version;
}

std::string kernel_driver_version(const std::string& proc_file) {
  if (const auto text = util::read_file(proc_file)) {
    if (std::string v = parse_kernel_driver_version(*text); !v.empty()) return v;
  }
  // Containers often hide /proc/driver/nvidia; NVML, which ships with every
  // driver, knows the release too.
  void* nvml = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml) return {};
  int (*init)() = nullptr;
  int (*get_version)(char*, unsigned) = nullptr;
  int (*shutdown)() = nullptr;
  std::string version;
  if (resolve(nvml, init, {"nvmlInit_v2", "nvmlInit"}) && resolve(nvml, get_version, {"nvmlSystemGetDriverVersion"}) &&
      resolve(nvml, shutdown, {"nvmlShutdown"}) && init() == 0) {
    char buf[96] = {};
    if (get_version(buf, sizeof buf) == 0) version = buf;
    shutdown();
  }
  ::dlclose(nvml);
  return version;
}

}  // namespace orc::smoke
