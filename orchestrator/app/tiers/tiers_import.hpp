#pragma once
// `orchestrate tiers import FILE...` (issue 15): the cluster's own inventory
// (nvidia-smi CSV, `scontrol show node -o`, `kubectl get nodes -o json`),
// merged by node name, proposed as a `tiers:` stanza; `-` reads stdin.
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/inventory/inventory.hpp"

namespace orc::app {

struct TiersImportRequest {
  std::vector<std::string> files;  // paths; "-" is standard input
  std::string stdin_text;          // what "-" reads (the caller reads it)
};

// Throws util::Failure bad_input for a file that cannot be read or is in
// none of the three formats (the file and line named).
inventory::Proposal tiers_import(const TiersImportRequest& request);

// {"nodes": N, "tiers": [{name, gpus, ccs, driver, nodes, slurm, kubernetes, notes}], "problems": [...]}
std::string tiers_json(const inventory::Proposal& proposal);

}  // namespace orc::app
