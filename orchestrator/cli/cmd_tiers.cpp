#include <CLI/CLI.hpp>
#include <iostream>
#include <iterator>
#include <memory>
#include <ostream>

#include "orchestrator/app/tiers/tiers_import.hpp"
#include "orchestrator/cli/commands.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_import_footer = R"(Reads what a cluster already reports, any mix of:

  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv > gpu01.csv
      one file per node (the file's name up to its first '.' is the node),
      or one file with a node (host, hostname) column, or pdsh/clush output
      ("gpu01: NVIDIA H100 80GB HBM3, 9.0, 550.54.15")
  scontrol show node -o > nodes.txt
      partitions, features and gres of every node
  kubectl get nodes -o json > nodes.json
      GPU Feature Discovery's nvidia.com/ labels

A node named in several files is one node. Nodes are grouped by the set of
compute capabilities of their GPUs; each tier gets the oldest driver of its
nodes, and where they are: the Slurm partition, constraint and gres that
select them, and the Kubernetes node labels. A GPU whose product the tables
lack and whose source reports no compute capability is listed, not placed.

Exit codes: 0 ok; 2 a file that cannot be read or is in none of the formats.)";

}  // namespace

void attach_tiers(CLI::App& sub, Io& io) {
  sub.require_subcommand(1);
  struct Options {
    std::vector<std::string> files;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* import = sub.add_subcommand("import", "Propose tiers from nvidia-smi CSV, Slurm node records or GFD labels");
  import->footer(k_import_footer);
  import->add_option("files", opt->files, "Inventory files ('-' reads standard input)")->required();
  import->add_flag("--json", opt->json, "Print {\"nodes\", \"tiers\": [...], \"problems\": [...]} as JSON");
  import->callback([opt, &io] {
    app::TiersImportRequest request{.files = opt->files, .stdin_text = {}};
    if (std::ranges::find(opt->files, "-") != opt->files.end())
      request.stdin_text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    const inventory::Proposal proposal = app::tiers_import(request);
    io.out << (opt->json ? app::tiers_json(proposal) : inventory::render_tiers_yaml(proposal));
  });
}

}  // namespace orc::cli
