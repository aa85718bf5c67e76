#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <ostream>

#include "orchestrator/app/tiers/tiers_import.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_import_footer = R"(Reads what a cluster already reports, any mix of:

  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv > gpu01.csv
      one file per node (the file's name up to its first '.' is the node),
      or one file with a node (host, hostname) column, or the same command
      run through pdsh or clush ("gpu01: NVIDIA H100 80GB HBM3, 9.0, ..."),
      their headers and all, or through dshbak [-c] or clush -b (nodes under
      host lists such as gpu[01-08]); a line a node printed instead (ssh's,
      "NVIDIA-SMI has failed ...") is listed as its problem
  scontrol show node -o > nodes.txt
      partitions, features and gres of every node
  kubectl get nodes -o json > nodes.json
      GPU Feature Discovery's nvidia.com/ labels

A node named in several files is one node. Nodes are grouped by the set of
compute capabilities of their GPUs (--group-by cc+driver: and by driver
branch, so 535.x and 550.x nodes become two tiers); each tier gets the
oldest driver of its nodes, and where they are: the Slurm partition,
constraint and gres that select them, and the Kubernetes node labels. A GPU whose product the tables
lack and whose source reports no compute capability is listed, not placed.

Exit codes: 0 ok; 2 a file that cannot be read, is in none of the formats or
is past a bound.)";

// The bounds of inventory::Limits, from its constants.
std::string import_footer() {
  std::string footer = k_import_footer;
  const auto at = footer.find("\n\nExit codes:");
  return footer.insert(at, "\n\nEach input is read to at most " + util::human_size(inventory::k_max_input_bytes) +
                               ", each line (and JSON string) to " + util::human_size(inventory::k_max_line_bytes) +
                               ";\nwhat the nodes read take in memory, all inputs together, to " +
                               util::human_size(inventory::k_max_node_bytes) +
                               ".\nPast any of these the input is refused, with its line.");
}

}  // namespace

void attach_tiers(CLI::App& sub, Io& io) {
  sub.require_subcommand(1);
  struct Options {
    std::vector<std::string> files;
    bool json = false;
    std::string group_by = "cc";
  };
  auto opt = std::make_shared<Options>();
  CLI::App* import =
      sub.add_subcommand("import", "Propose tiers from nvidia-smi CSV, Slurm node records or GFD labels");
  import->footer(import_footer());
  import->add_option("files", opt->files, "Inventory files ('-' reads standard input)")->required();
  import->add_flag("--json", opt->json, "Print {\"nodes\", \"tiers\": [...], \"problems\": [...]} as JSON");
  import
      ->add_option("--group-by", opt->group_by,
                   "cc: a tier per set of compute capabilities (default); cc+driver: and per driver branch")
      ->check(CLI::IsMember({"cc", "cc+driver"}));
  import->callback([opt, &io] {
    const app::TiersImportRequest request{.files = opt->files,
                                          .stdin_stream = &std::cin,
                                          .limits = {},
                                          .group_by = inventory::parse_group_by(opt->group_by).value()};
  const inventory::Proposal proposal = app::tiers_import(request);
  io.out << (opt->json ? app::tiers_json(proposal, request.group_by) : inventory::render_tiers_yaml(proposal));
});
}  // namespace orc::cli

}  // namespace orc::cli
