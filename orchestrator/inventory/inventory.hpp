#pragma once
// What a cluster already reports about its GPU nodes (issue 15), read into
// one shape: nvidia-smi's CSV (`--query-gpu=name,compute_cap,driver_version
// --format=csv`, one file per node or one with a node column), Slurm's node
// records (`scontrol show node -o`) and Kubernetes nodes labelled by GPU
// Feature Discovery (`kubectl get nodes -o json`). A GPU's compute
// capability is the one its source reports (nvidia-smi's compute_cap, GFD's
// gpu.compute.major/minor) or the GPU tables' for a product they hold; a
// product neither gives is reported, never guessed.
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::inventory {

enum class Source { nvidia_smi, slurm, kubernetes };
std::string_view to_string(Source source);

struct NodeGpu {
  std::string product;                        // as the source writes it: "NVIDIA H100 80GB HBM3", "h100", "Tesla-T4"
  std::string canonical;                      // the tables' name ("H100"); empty when they lack the product
  std::optional<arch::ComputeCapability> cc;  // nullopt: neither the source nor the tables say
  std::string cc_from;                        // "nvidia-smi compute_cap", "GFD labels", "the GPU tables"
  unsigned count = 1;
};

struct Node {
  std::string name;
  std::vector<Source> sources;  // every source that named it (merged by name)
  std::string file;             // the first file it was read from
  std::vector<NodeGpu> gpus;
  std::optional<util::Version> driver;     // nvidia-smi's driver_version, GFD's cuda.driver labels
  std::vector<std::string> partitions;     // Slurm
  std::vector<std::string> features;       // Slurm AvailableFeatures
  std::string gres;                        // Slurm Gres, as written ("gpu:h100:2(S:0-1)")
  std::map<std::string, std::string> labels;  // Kubernetes: the nvidia.com/ labels
};

// Something about a node that keeps it out of every tier, or a
// disagreement between sources.
struct Problem {
  std::string node;
  std::string file;
  std::string message;
};

struct Inventory {
  std::vector<Node> nodes;  // in the order first read
  std::vector<Problem> problems;
  // Adds `other`'s nodes, merging a node named in both: Slurm's placement,
  // the labels, the oldest driver; the GPUs of the source that reports a
  // compute capability, a problem where two sources name other products.
  void merge(Inventory other);
};

// nvidia-smi's CSV. With a header: the columns `name` and `driver_version`
// (`compute_cap` where the driver has it: the 470 branch lacks it, 525 has it), and the node in
// a column named node, host or hostname; without one, name, compute_cap,
// driver_version in that order. With no node column the file is one node,
// named `node` (the caller passes the file's stem). Bad input: the
// Diagnostic names the file and line.
std::expected<Inventory, util::Diagnostic> parse_nvidia_smi_csv(std::string_view text, const std::string& file,
                                                                const std::string& node);
// `scontrol show node -o`: one node per line, Key=Value words (values such
// as OS= hold spaces). Nodes without a gpu Gres are not GPU nodes and are
// skipped.
std::expected<Inventory, util::Diagnostic> parse_scontrol_nodes(std::string_view text, const std::string& file);
// `kubectl get nodes -o json` (a List of Node, or one Node). Nodes without
// GFD's nvidia.com/gpu.product label are skipped.
std::expected<Inventory, util::Diagnostic> parse_kubectl_nodes(std::string_view text, const std::string& file);
// By content: JSON is kubectl's, a line starting NodeName= scontrol's,
// anything else nvidia-smi's CSV (node named `node`).
std::expected<Inventory, util::Diagnostic> parse_inventory(std::string_view text, const std::string& file,
                                                           const std::string& node);

// A tier proposed from the inventory: the nodes whose GPUs have one set of
// compute capabilities, with the oldest driver among them, and where they
// are: the Slurm partition, constraint and gres that select them, and the
// Kubernetes labels.
struct ProposedGpu {
  std::string name;                                 // the tables' product name, or the source's for a declared device
  std::optional<arch::ComputeCapability> declared;  // set for a product the tables lack: {name, cc}
  bool operator==(const ProposedGpu&) const = default;
};

struct ProposedTier {
  std::string name;                                // "h100", "a100-a30", "sm90"
  std::vector<arch::ComputeCapability> ccs;        // ascending
  std::vector<ProposedGpu> gpus;
  std::optional<util::Version> driver;             // the oldest; nullopt when no source of these nodes says
  std::vector<std::string> nodes;                  // by name, as read
  std::vector<std::string> products;               // "NVIDIA H100 80GB HBM3 x8" per distinct product and count
  std::vector<std::string> drivers;                // every driver seen, ascending
  std::string partition;                           // a partition holding all of them (fewest others); empty: none
  std::string constraint;                          // Slurm features all of them have that set them apart
  std::string gres;                                // "gpu:h100:1", or "gpu:1" when their Gres types differ
  std::map<std::string, std::string> selector;     // Kubernetes labels that select exactly these nodes
  std::vector<std::string> notes;                  // what could not be derived, and why
};

struct Proposal {
  std::vector<ProposedTier> tiers;  // by lowest compute capability
  std::vector<Problem> problems;    // nodes in no tier, and disagreements
  std::size_t nodes = 0;
};

Proposal propose_tiers(const Inventory& inventory);

// The `tiers:` stanza of orchestrate.yaml, each tier with a comment naming
// its nodes, products and drivers, and the problems as comments after it.
std::string render_tiers_yaml(const Proposal& proposal);

}  // namespace orc::inventory
