#include "orchestrator/smoke/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "orchestrator/arch/gpu_db.hpp"

namespace orc::smoke {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t k_log_size = 1 << 16;
constexpr std::size_t k_name_size = 256;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class DeviceBuffer {
 public:
  DeviceBuffer(const DriverApi& api, std::size_t bytes) : m_api(api) { m_result = api.mem_alloc(&m_ptr, bytes); }
  ~DeviceBuffer() {
    if (m_ptr) m_api.mem_free(m_ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  cu::Result result() const { return m_result; }
  cu::DevicePtr& ptr() { return m_ptr; }

 private:
  const DriverApi& m_api;
  cu::DevicePtr m_ptr = 0;
  cu::Result m_result = cu::k_success;
};

// A module loaded with JIT options; unloaded with the object.
struct LoadedImage {
  const DriverApi* api = nullptr;
  cu::Module module = nullptr;
  cu::Library library = nullptr;
  LoadObservation observation;
  LoadedImage() = default;
  LoadedImage(const LoadedImage&) = delete;
  LoadedImage& operator=(const LoadedImage&) = delete;
  ~LoadedImage() {
    if (library)
      api->library_unload(library);
    else if (module)
      api->module_unload(module);
  }
};

void load_image(const DriverApi& api, ByteSpan image, Loader loader, LoadedImage& out) {
  out.api = &api;
  std::string info(k_log_size, '\0');
  std::string error(k_log_size, '\0');
  float wall_ms = 0;
  int options[] = {cu::k_jit_wall_time,        cu::k_jit_info_log_buffer,       cu::k_jit_info_log_buffer_size,
                   cu::k_jit_error_log_buffer, cu::k_jit_error_log_buffer_size, cu::k_jit_log_verbose};
  void* values[] = {&wall_ms,
                    info.data(),
                    reinterpret_cast<void*>(static_cast<std::uintptr_t>(k_log_size - 1)),
                    error.data(),
                    reinterpret_cast<void*>(static_cast<std::uintptr_t>(k_log_size - 1)),
                    reinterpret_cast<void*>(std::uintptr_t{1})};
  void* const wall_slot = values[0];
  constexpr unsigned k_options = sizeof options / sizeof options[0];
  const auto start = Clock::now();
  cu::Result r;
  if (loader == Loader::library && api.library_load_data && api.library_unload && api.library_get_module) {
    r = api.library_load_data(&out.library, image.data(), options, values, k_options, nullptr, nullptr, 0);
    if (r == cu::k_success) r = api.library_get_module(&out.module, out.library);
  } else {
    r = api.module_load_data_ex(&out.module, image.data(), k_options, options, values);
  }
  LoadObservation& o = out.observation;
  o.load_ms = ms_since(start);
  // CU_JIT_WALL_TIME "overwrites the option value": the float lands in the
  // slot itself on the drivers we know; read it from wherever it went.
  if (values[0] != wall_slot) std::memcpy(&wall_ms, &values[0], sizeof wall_ms);
  o.jit_ms = wall_ms;
  o.cu_result = r;
  if (r != cu::k_success) o.error_name = api.error_name(r);
  o.signals.info_log = info.c_str();
  o.error_log = error.c_str();
}

// Reads the probe's versions and classifies the load.
void finish_observation(const DriverApi& api, LoadedImage& image, std::string_view probe) {
  LoadObservation& o = image.observation;
  if (o.cu_result == cu::k_success && !probe.empty()) {
    cu::Function f = nullptr;
    if (api.module_get_function(&f, image.module, std::string(probe).c_str()) == cu::k_success) {
      api.func_get_attribute(&o.signals.binary_version, cu::k_func_binary_version, f);
      api.func_get_attribute(&o.signals.ptx_version, cu::k_func_ptx_version, f);
    }
  }
  o.outcome = classify_load(o.cu_result, o.signals);
}

std::string cc_text(int arch_number) {
  return arch_number > 0 ? std::to_string(arch_number / 100) + "." + std::to_string(arch_number / 10 % 10) : "?";
}

// Launches once; the error of the launch or of the synchronize after it.
cu::Result launch(const DriverApi& api, const KernelSpec& spec, cu::Function f, void** params) {
  const Geometry& g = spec.geometry;
  cu::Result r;
  if (g.cluster_x > 0) {
    cu::LaunchAttribute cluster;
    cluster.id = cu::k_launch_attr_cluster_dimension;
    cluster.value.cluster_dim = {g.cluster_x, 1, 1};
    const cu::LaunchConfig config{.grid_x = g.grid_x,
                                  .grid_y = g.grid_y,
                                  .grid_z = 1,
                                  .block_x = g.block_x,
                                  .block_y = g.block_y,
                                  .block_z = 1,
                                  .shared_mem_bytes = 0,
                                  .stream = nullptr,
                                  .attrs = &cluster,
                                  .num_attrs = 1};
    r = api.launch_kernel_ex(&config, f, params, nullptr);
  } else {
    r = api.launch_kernel(f, g.grid_x, g.grid_y, 1, g.block_x, g.block_y, 1, 0, nullptr, params, nullptr);
  }
  return r == cu::k_success ? api.ctx_synchronize() : r;
}

KernelResult run_kernel(const DriverApi& api, const GpuInfo& gpu, cu::Module module, const KernelSpec& spec,
                        std::mt19937_64& rng, int timing_runs) {
  KernelResult k{.name = std::string(spec.name)};
  const auto fail = [&](KernelStatus status, std::string detail) {
    k.status = status;
    k.detail = std::move(detail);
    return k;
  };
  cu::Function f = nullptr;
  if (cu::Result r = api.module_get_function(&f, module, std::string(spec.symbol).c_str()); r != cu::k_success)
    return fail(KernelStatus::error, std::string(spec.symbol) + " is not in the fatbin: " + api.error_name(r));
  if (spec.geometry.cluster_x > 0 && (!gpu.cluster_launch || !api.launch_kernel_ex))
    return fail(KernelStatus::skipped, gpu.cluster_launch ? "the driver has no cuLaunchKernelEx"
                                                          : "this GPU cannot launch thread-block clusters");
  const Inputs in = make_inputs(spec, rng);
  const std::vector<float> zeros(spec.outputs, 0.0f);
  const int status_init[2] = {0, 0};
  DeviceBuffer a(api, in.a.size() * sizeof(float)), b(api, in.b.size() * sizeof(float));
  DeviceBuffer out(api, spec.outputs * sizeof(float)), status(api, sizeof status_init);
  for (auto* buffer : {&a, &b, &out, &status})
    if (buffer->result() != cu::k_success)
      return fail(KernelStatus::error, "cuMemAlloc: " + api.error_name(buffer->result()));
  cu::Result r = api.memcpy_htod(a.ptr(), in.a.data(), in.a.size() * sizeof(float));
  if (r == cu::k_success) r = api.memcpy_htod(b.ptr(), in.b.data(), in.b.size() * sizeof(float));
  if (r == cu::k_success) r = api.memcpy_htod(out.ptr(), zeros.data(), zeros.size() * sizeof(float));
  if (r == cu::k_success) r = api.memcpy_htod(status.ptr(), status_init, sizeof status_init);
  if (r != cu::k_success) return fail(KernelStatus::error, "cuMemcpyHtoD: " + api.error_name(r));

  int n = spec.n;
  void* params[] = {&a.ptr(), &b.ptr(), &out.ptr(), &n, &status.ptr()};
  if (r = launch(api, spec, f, params); r != cu::k_success)
    return fail(KernelStatus::error, "launch: " + api.error_name(r));
  int words[2] = {0, 0};
  std::vector<float> got(spec.outputs);
  r = api.memcpy_dtoh(words, status.ptr(), sizeof words);
  if (r == cu::k_success) r = api.memcpy_dtoh(got.data(), out.ptr(), got.size() * sizeof(float));
  if (r != cu::k_success) return fail(KernelStatus::error, "cuMemcpyDtoH: " + api.error_name(r));
  k.compiled_for = words[1];

  Comparison c;
  if (words[0] == k_ran) c = compare(got, spec.reference(in, spec.n), spec.tolerance);
  k.status = judge_run(words[0], c);
  k.checked = c.checked;
  k.wrong = c.wrong;
  k.max_error = c.max_error;
  if (k.status == KernelStatus::skipped)
    k.detail = "needs CC " + spec.min_cc.dotted() + "; the code that ran was compiled for " + cc_text(words[1]);
  else if (words[0] != k_ran)
    k.detail = "the kernel never reported running (status word " + std::to_string(words[0]) + ")";
  else if (k.status == KernelStatus::failed)
    k.detail = std::to_string(c.wrong) + " of " + std::to_string(c.checked) + " values wrong; first at " +
               std::to_string(c.first_wrong) + ": got " + std::to_string(c.first_got) + ", want " +
               std::to_string(c.first_want);
  if (k.status != KernelStatus::passed) return k;

  std::vector<double> times;
  for (int t = 0; t < timing_runs; ++t) {
    const auto start = Clock::now();
    if (launch(api, spec, f, params) != cu::k_success) break;
    times.push_back(ms_since(start) * 1000.0);
  }
  if (!times.empty()) {
    std::ranges::sort(times);
    k.median_us = times[times.size() / 2];
  }
  return k;
}

}  // namespace

std::expected<Driver, std::string> Driver::open(const RunOptions& options) {
  auto api = load_driver(options.soname);
  if (!api) return std::unexpected(api.error().message);
  // Both are read by cuInit; see runner.hpp for why.
  if (options.disable_jit_cache) ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  ::setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  Driver d;
  d.m_api = *api;
  d.m_options = options;
  if (cu::Result r = d.m_api.init(0); r != cu::k_success) {
    const std::string name = d.m_api.error_name(r);
    if (r == cu::k_error_no_device) return std::unexpected("no NVIDIA GPU on this machine (cuInit: " + name + ")");
    return std::unexpected("the NVIDIA driver failed to start (cuInit: " + name + ")");
  }
  d.m_api.driver_get_version(&d.m_cuda_version);
  int count = 0;
  if (cu::Result r = d.m_api.device_get_count(&count); r != cu::k_success)
    return std::unexpected("cuDeviceGetCount: " + d.m_api.error_name(r));
  if (count == 0) return std::unexpected("no NVIDIA GPU on this machine (the driver lists none)");
  for (int i = 0; i < count; ++i) {
    cu::Device dev = 0;
    if (d.m_api.device_get(&dev, i) != cu::k_success) continue;
    char name[k_name_size] = {};
    d.m_api.device_get_name(name, static_cast<int>(k_name_size), dev);
    int major = 0, minor = 0, sms = 0, cluster = 0;
    d.m_api.device_get_attribute(&major, cu::k_attr_cc_major, dev);
    d.m_api.device_get_attribute(&minor, cu::k_attr_cc_minor, dev);
    d.m_api.device_get_attribute(&sms, cu::k_attr_multiprocessor_count, dev);
    // Drivers before CUDA 11.8 do not know the attribute; that is "no".
    if (d.m_api.device_get_attribute(&cluster, cu::k_attr_cluster_launch, dev) != cu::k_success) cluster = 0;
    d.m_gpus.push_back(
        {.ordinal = i, .name = name, .cc = {major, minor}, .multiprocessors = sms, .cluster_launch = cluster != 0});
    cu::Context ctx = nullptr;
    d.m_context_results.push_back(d.m_api.primary_ctx_retain(&ctx, dev));
    d.m_contexts.push_back(d.m_context_results.back() == cu::k_success ? ctx : nullptr);
  }
  return d;
}

Driver::Driver(Driver&& other) noexcept
    : m_api(other.m_api),
      m_options(std::move(other.m_options)),
      m_cuda_version(other.m_cuda_version),
      m_gpus(std::move(other.m_gpus)),
      m_contexts(std::move(other.m_contexts)),
      m_context_results(std::move(other.m_context_results)) {
  other.m_contexts.clear();
}

Driver::~Driver() {
  if (m_contexts.empty()) return;
  m_api.ctx_set_current(nullptr);
  for (std::size_t i = 0; i < m_contexts.size(); ++i)
    if (m_contexts[i]) m_api.primary_ctx_release(static_cast<cu::Device>(i));
}

cu::Result Driver::make_current(int ordinal) const {
  const auto i = static_cast<std::size_t>(ordinal);
  if (i >= m_contexts.size()) return cu::k_error_no_device;
  if (!m_contexts[i]) return m_context_results[i];
  return m_api.ctx_set_current(m_contexts[i]);
}

LoadObservation Driver::observe_load(int ordinal, ByteSpan image, std::string_view probe, Loader loader) const {
  if (cu::Result r = make_current(ordinal); r != cu::k_success) {
    LoadObservation o{.outcome = LoadOutcome::error, .cu_result = r};
    o.error_name = m_api.error_name(r);
    return o;
  }
  LoadedImage image_state;
  load_image(m_api, image, loader, image_state);
  finish_observation(m_api, image_state, probe);
  return image_state.observation;
}

GpuResult Driver::smoke(int ordinal, ByteSpan fatbin, std::uint64_t seed) const {
  const GpuInfo& gpu = m_gpus.at(static_cast<std::size_t>(ordinal));
  GpuResult g{.ordinal = gpu.ordinal,
              .name = gpu.name,
              .cc = gpu.cc,
              .cc_known = !arch::architecture_of(gpu.cc).empty(),
              .multiprocessors = gpu.multiprocessors};
  if (cu::Result r = make_current(ordinal); r != cu::k_success) {
    g.load = LoadObservation{.outcome = LoadOutcome::error, .cu_result = r};
    g.load->error_name = m_api.error_name(r);
    return g;
  }
  LoadedImage image;
  load_image(m_api, fatbin, Loader::module, image);
  finish_observation(m_api, image, kernel_table().front().symbol);
  g.load = image.observation;
  if (image.observation.cu_result != cu::k_success) return g;
  std::mt19937_64 rng(seed);
  for (const KernelSpec& spec : kernel_table())
    g.kernels.push_back(run_kernel(m_api, gpu, image.module, spec, rng, m_options.timing_runs));
  return g;
}

}  // namespace orc::smoke
