#pragma once
// `orchestrate gpus` and `orchestrate toolkits`: the knowledge base, as
// reports the command line renders (cli/render_tables.cpp).
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/compat/cudnn.hpp"
#include "orchestrator/compat/toolkits.hpp"

namespace orc::app {

struct GpuRow {
  arch::Gpu gpu;
  compat::ToolkitWindow nvcc;  // the toolkits that compile SASS for it; null pair when none does
};

struct GpusReport {
  std::vector<GpuRow> gpus;
  bool lookup = false;  // one GPU looked up by name: JSON prints the object, not a list
};

// Every GPU, or the one NAME matches (throws util::Failure bad_input with a
// did-you-mean for an unknown name).
GpusReport list_gpus(const std::optional<std::string>& name);

struct ToolkitsReport {
  std::span<const compat::Toolkit> toolkits;    // empty under --cudnn
  std::span<const compat::CudnnRelease> cudnn;  // set only under --cudnn
  bool cudnn_table = false;
};

// The toolkit table, or with `cudnn` the cuDNN table.
ToolkitsReport list_toolkits(bool cudnn);

}  // namespace orc::app
