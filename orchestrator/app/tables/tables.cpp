#include "orchestrator/app/tables/tables.hpp"

#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

GpusReport list_gpus(const std::optional<std::string>& name) {
  GpusReport report;
  if (name) {
    auto gpu = arch::find_gpu(*name);
    if (!gpu) {
      throw util::Failure(util::ExitCode::bad_input,
                          {util::Diagnostic{.message = gpu.error().message, .suggestion = gpu.error().suggestion}});
    }
    report.gpus.push_back({*gpu, compat::toolkit_window(gpu->cc)});
    report.lookup = true;
    return report;
  }
  for (const auto& g : arch::gpu_table()) report.gpus.push_back({g, compat::toolkit_window(g.cc)});
  return report;
}

ToolkitsReport list_toolkits(bool cudnn) {
  if (cudnn) return {.toolkits = {}, .cudnn = compat::cudnn_table(), .cudnn_table = true};
  return {.toolkits = compat::toolkit_table(), .cudnn = {}, .cudnn_table = false};
}

}  // namespace orc::app
