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

struct GpusQuery {
  std::optional<std::string> name;  // a product, an architecture or a fragment of names
  std::optional<std::string> cc;    // --cc 8.6
};

// Every GPU; the one product `name` names (lookup); else the GPUs of the
// architecture or whose names hold it (arch::search_gpus); those of `cc`
// (with a name too: both must hold). Throws util::Failure bad_input for a
// name nothing matches (with a did-you-mean of the same family), a CC that
// does not parse, or a search nothing answers.
GpusReport list_gpus(const GpusQuery& query);

struct ToolkitsReport {
  std::span<const compat::Toolkit> toolkits;    // empty under --cudnn
  std::span<const compat::CudnnRelease> cudnn;  // set only under --cudnn
  bool cudnn_table = false;
};

// The toolkit table, or with `cudnn` the cuDNN table.
ToolkitsReport list_toolkits(bool cudnn);

}  // namespace orc::app
