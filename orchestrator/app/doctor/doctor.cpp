#include "orchestrator/app/doctor/doctor.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/engine/host_engine.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/inspect/verdict.hpp"
#include "orchestrator/site/driver_facts.hpp"
#include "orchestrator/smoke/result.hpp"
#include "orchestrator/smoke/runner.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;

class StdoutSink final : public engine::LogSink {
 public:
  void on_output(engine::OutputStream stream, std::string_view bytes) override {
    if (stream == engine::OutputStream::out) text += bytes;
  }
  std::string text;
};

// The first executable `name` on PATH, else `fallback` when it is executable.
std::string find_program(std::string_view name, std::string_view fallback = {}) {
  if (const auto path = util::env_get("PATH"))
    for (const auto& dir : util::split_any(*path, ":"))
      if (const std::string candidate = dir + "/" + std::string(name); ::access(candidate.c_str(), X_OK) == 0)
        return candidate;
  if (!fallback.empty() && ::access(std::string(fallback).c_str(), X_OK) == 0) return std::string(fallback);
  return {};
}

// A program's stdout when it exits 0.
std::optional<std::string> capture(std::vector<std::string> argv) {
  engine::HostEngine host;
  StdoutSink sink;
  engine::BuildSpec spec;
  spec.argv = std::move(argv);
  auto run = host.run(spec, sink);
  if (!run || run->exit_code != 0) return std::nullopt;
  return sink.text;
}

// python3's sys.path entries that are package directories.
std::vector<fs::path> python_package_dirs() {
  const std::string python = find_program("python3");
  if (python.empty()) return {};
  const auto out = capture({python, "-c", "import sys; print('\\n'.join(sys.path))"});
  if (!out) return {};
  std::vector<fs::path> dirs;
  for (const auto& line : util::split_any(*out, "\n")) {
    const fs::path dir(line);
    const std::string leaf = dir.filename().string();
    if ((leaf == "site-packages" || leaf == "dist-packages") && fs::is_directory(dir)) dirs.push_back(dir);
  }
  return dirs;
}

std::vector<std::string> names(const std::set<arch::ComputeCapability>& ccs, bool ptx) {
  std::vector<std::string> out;
  for (const auto& cc : ccs) out.push_back(ptx ? cc.compute() : cc.sm());
  return out;
}

}  // namespace

std::vector<std::pair<std::string, fs::path>> find_framework_libraries(const fs::path& dir) {
  std::vector<std::pair<std::string, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / "torch" / "lib", ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.starts_with("libtorch_cuda") && name.find(".so") != std::string::npos)
      found.emplace_back("pytorch", entry.path());
  }
  for (const auto& package : fs::directory_iterator(dir / "nvidia", ec)) {
    std::error_code inner;
    for (const auto& entry : fs::directory_iterator(package.path() / "lib", inner))
      if (entry.is_regular_file() && entry.path().filename().string().find(".so") != std::string::npos)
        found.emplace_back("nvidia-" + package.path().filename().string(), entry.path());
  }
  std::ranges::sort(found, {}, [](const auto& p) { return p.second; });
  return found;
}

std::vector<LibraryVerdict> judge_library(const inspect::FileReport& file, const std::vector<DoctorGpu>& gpus,
                                          const std::string& driver_version, int driver_cuda_version) {
  const inspect::DriverFacts facts = site::driver_facts(site::node_driver(driver_version, driver_cuda_version));
  std::vector<LibraryVerdict> verdicts;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    const DoctorGpu& gpu = gpus[g];
    LibraryVerdict v{.gpu = g,
                     .cc = gpu.cc,
                     .outcome = "unknown",
                     .detail = "compute capability " + gpu.cc.dotted() +
                               " is not in the GPU tables: where this library runs is not guessed"};
    if (!gpu.architecture.empty()) {
      const inspect::FileVerdict verdict = inspect::judge_file(file, gpu.cc, facts);
      v.outcome = std::string(inspect::outcome_name(verdict.verdict.outcome));
      v.detail = verdict.verdict.detail;
      v.runtime_kernels = verdict.runtime_kernels;
    }
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

DoctorReport doctor(const DoctorRequest& request) {
  DoctorReport report;
  // The driver; doctor never runs code on the GPU, it only needs the list.
  if (auto driver = smoke::Driver::open({.soname = request.driver_library, .disable_jit_cache = false})) {
    report.driver_version = smoke::kernel_driver_version();
    report.driver_cuda_version = driver->cuda_version();
    for (const auto& g : driver->gpus())
      report.gpus.push_back({.name = g.name, .cc = g.cc, .architecture = std::string(arch::architecture_of(g.cc))});
  } else {
    report.driver_error = driver.error();
  }

  report.nvcc = find_program("nvcc", std::string(compat::k_default_host_cuda) + "/bin/nvcc");
  if (!report.nvcc.empty())
    if (const auto out = capture({report.nvcc, "--version"}))
      if (const auto version = compat::parse_nvcc_version(*out)) report.toolkit = version->str();
  report.toolkits = site::discover_host_toolkits(site::host_toolkit_search_from_environment());

  std::vector<std::pair<std::string, fs::path>> libraries;
  std::vector<fs::path> dirs;
  for (const auto& p : request.paths) {
    if (fs::is_directory(p))
      dirs.push_back(p);
    else
      libraries.emplace_back("given", p);  // a missing file fails after inspect_files, with its name
  }
  if (request.search_python)
    for (const auto& d : python_package_dirs()) dirs.push_back(d);
  for (const auto& d : dirs) {
    report.searched.push_back(d.string());
    for (auto& found : find_framework_libraries(d)) libraries.push_back(std::move(found));
  }
  if (libraries.empty()) return report;

  std::vector<fs::path> paths;
  for (const auto& l : libraries) paths.push_back(l.second);
  const auto inspected = inspect::inspect_files(paths, {.modules = true});
  inspect::require_readable(inspected);
  for (std::size_t i = 0; i < inspected.size(); ++i) {
    const inspect::FileReport& file = inspected[i];
    FrameworkLibrary lib{.framework = libraries[i].first,
                         .path = file.path,
                         .device_code = file.device_code(),
                         .sass = names(file.sass, false),
                         .ptx = names(file.ptx, true),
                         .verdicts = {}};
    if (lib.device_code)
      lib.verdicts = judge_library(file, report.gpus, report.driver_version, report.driver_cuda_version);
    report.libraries.push_back(std::move(lib));
  }
  return report;
}

}  // namespace orc::app
