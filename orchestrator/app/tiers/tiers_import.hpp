#pragma once
// `orchestrate tiers import FILE...` (issue 15): the cluster's own inventory
// (nvidia-smi CSV, `scontrol show node -o`, `kubectl get nodes -o json`),
// merged by node name, proposed as a `tiers:` stanza; `-` reads stdin. Each
// input is read as a stream, within inventory::Limits (issue 28).
#include <iosfwd>
#include <string>
#include <vector>

#include "orchestrator/inventory/inventory.hpp"

namespace orc::app {

struct TiersImportRequest {
  std::vector<std::string> files;        // paths; "-" is standard input
  std::istream* stdin_stream = nullptr;  // what "-" reads; null: none is given (an error)
  inventory::Limits limits;
  inventory::GroupBy group_by = inventory::GroupBy::cc;
};

// Throws util::Failure bad_input for a file that cannot be read, is in none
// of the three formats or is past a limit (the file and line named).
inventory::Proposal tiers_import(const TiersImportRequest& request);

// {"nodes": N, "group_by": "cc", "tiers": [{name, gpus, ccs, driver, driver_branch, nodes, slurm,
// kubernetes, notes}], "problems": [...]}
std::string tiers_json(const inventory::Proposal& proposal, inventory::GroupBy group_by = inventory::GroupBy::cc);

}  // namespace orc::app
