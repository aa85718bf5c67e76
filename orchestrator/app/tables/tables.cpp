#include "orchestrator/app/tables/tables.hpp"

#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

namespace {

// With nothing close to offer, say how to look instead.
[[noreturn]] void fail_lookup(const arch::GpuLookupError& error) {
  const std::string message = error.suggestion.empty()
                                  ? error.message +
                                        ": list the tables with `orchestrate gpus`, or search them (`gpus Blackwell`, "
                                        "`gpus \"RTX 50\"`, `gpus --cc 8.6`)"
                                  : error.message;
  throw util::Failure(util::ExitCode::bad_input,
                      {util::Diagnostic{.message = message, .suggestion = error.suggestion}});
}

std::optional<arch::ComputeCapability> wanted_cc(const GpusQuery& query) {
  if (!query.cc) return std::nullopt;
  auto cc = arch::ComputeCapability::parse(*query.cc);
  if (!cc) util::fail_input("--cc " + *query.cc + ": " + cc.error());
  return *cc;
}

}  // namespace

GpusReport list_gpus(const GpusQuery& query) {
  GpusReport report;
  const auto cc = wanted_cc(query);
  std::vector<arch::Gpu> found;
  if (query.name) {
    auto gpu = arch::find_gpu(*query.name);
    if (gpu && !cc) {
      report.gpus.push_back({*gpu, compat::toolkit_window(gpu->cc)});
      report.lookup = true;
      return report;
    }
    found = gpu ? std::vector<arch::Gpu>{*gpu} : arch::search_gpus(*query.name);
    if (found.empty()) fail_lookup(gpu.error());
  } else {
    found.assign(arch::gpu_table().begin(), arch::gpu_table().end());
  }
  for (const auto& g : found)
    if (!cc || g.cc == cc->base()) report.gpus.push_back({g, compat::toolkit_window(g.cc)});
  if (report.gpus.empty())
    util::fail_input("no GPU in the tables has compute capability " + cc->base().dotted() +
                     (query.name ? " and matches '" + *query.name + "'" : std::string()));
  return report;
}

ToolkitsReport list_toolkits(bool cudnn) {
  if (cudnn) return {.toolkits = {}, .cudnn = compat::cudnn_table(), .cudnn_table = true};
  return {.toolkits = compat::toolkit_table(), .cudnn = {}, .cudnn_table = false};
}

}  // namespace orc::app
