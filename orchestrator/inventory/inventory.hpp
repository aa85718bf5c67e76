#pragma once
// What a cluster already reports about its GPU nodes (issue 15), read into
// one shape: nvidia-smi's CSV (`--query-gpu=name,compute_cap,driver_version
// --format=csv`, one file per node or one with a node column), Slurm's node
// records (`scontrol show node -o`) and Kubernetes nodes labelled by GPU
// Feature Discovery (`kubectl get nodes -o json`). A GPU's compute
// capability is the one its source reports (nvidia-smi's compute_cap, GFD's
// gpu.compute.major/minor) or the GPU tables' for a product they hold; a
// product neither gives is reported, never guessed.
//
// Inputs are read as streams, in pieces (issue 28): no input is held whole,
// each one is read to at most Limits::input_bytes, each line (CSV,
// scontrol) and each JSON string or number to at most Limits::line_bytes,
// and what the nodes read take in memory, all inputs together, to at most
// Limits::node_bytes; past any of them the input is refused with its file
// and line. Time is linear in the input: nodes are found by name through an
// index, and tiers are grouped and placed through maps.
#include <cstdint>
#include <deque>
#include <expected>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
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
  std::optional<util::Version> driver;        // nvidia-smi's driver_version, GFD's cuda.driver labels
  std::vector<std::string> partitions;        // Slurm
  std::vector<std::string> features;          // Slurm AvailableFeatures
  std::string gres;                           // Slurm Gres, as written ("gpu:h100:2(S:0-1)")
  std::map<std::string, std::string> labels;  // Kubernetes: the GFD labels read (k_gfd_labels)
};

// The GFD labels a node's Kubernetes record is read for; no other label is kept.
inline constexpr std::string_view k_gfd_labels[] = {
    "nvidia.com/gpu.product",       "nvidia.com/gpu.compute.major",        "nvidia.com/gpu.compute.minor",
    "nvidia.com/gpu.count",         "nvidia.com/cuda.driver-version.full", "nvidia.com/cuda.driver.major",
    "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"};

// Something about a node that keeps it out of every tier, or a
// disagreement between sources.
struct Problem {
  std::string node;
  std::string file;
  std::string message;
};

class Inventory {
 public:
  // In the order first read; a deque, so a node stays where it is (and a
  // million of them are never copied to grow).
  std::deque<Node> nodes;
  std::vector<Problem> problems;

  // The node of that name, or null.
  Node* find(const std::string& name);
  // A node not read before, at the end.
  Node& add(Node node);
  // Adds `other`'s nodes, merging a node named in both: Slurm's placement,
  // the labels, the oldest driver; the GPUs of the source that reports a
  // compute capability, a problem where two sources name other products.
  void merge(Inventory other);
  // About what the nodes take in memory (their strings and lists), as
  // counted against Limits::node_bytes.
  std::uint64_t footprint() const { return m_footprint; }
  // Counts a node's change: its footprint before and after.
  void account(std::uint64_t before, std::uint64_t after) { m_footprint += after - before; }

 private:
  // Nodes by name; nodes [m_indexed, size) are indexed on the next find.
  std::unordered_map<std::string, std::size_t> m_index;
  std::size_t m_indexed = 0;
  std::uint64_t m_footprint = 0;
};

// What a node takes in memory, about: its strings, lists and index entry.
std::uint64_t footprint(const Node& node);

// Bounds on what is read (issue 28). An input past one is refused (exit 2)
// with its file and line and what to do, never read on until memory runs out.
inline constexpr std::uint64_t k_max_input_bytes = std::uint64_t{1} << 30;
inline constexpr std::size_t k_max_line_bytes = std::size_t{1} << 20;
inline constexpr std::uint64_t k_max_node_bytes = std::uint64_t{256} << 20;
// Kinds of GPU (products, compute capabilities) on one node: 8 is a big node.
inline constexpr std::size_t k_max_gpu_kinds = 64;
struct Limits {
  std::uint64_t input_bytes = k_max_input_bytes;  // of one file, or standard input
  std::size_t line_bytes = k_max_line_bytes;      // of one line, one JSON string or number
  std::uint64_t node_bytes = k_max_node_bytes;    // footprint() of every input read so far together
};

// Where an input's bytes come from, read in pieces: a file, standard input,
// text in memory.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to into.size() bytes; 0 at the end. An error says what failed.
  virtual std::expected<std::size_t, std::string> read(std::span<char> into) = 0;
};

class TextSource final : public ByteSource {
 public:
  explicit TextSource(std::string_view text) : m_text(text) {}
  std::expected<std::size_t, std::string> read(std::span<char> into) override;

 private:
  std::string_view m_text;
};

// One input: its name in messages ("gpu01.csv", "standard input"), the node
// an nvidia-smi CSV without a node column is, and the bounds; `held` is the
// footprint of what earlier inputs read, which counts against node_bytes.
struct InputSpec {
  std::string file;
  std::string node;
  Limits limits;
  std::uint64_t held = 0;
};

// nvidia-smi's CSV. With a header: the columns `name` and `driver_version`
// (`compute_cap` where the driver has it: the 470 branch lacks it, 525 has
// it), and the node in a column named node, host or hostname; without one,
// name, compute_cap, driver_version in that order. With no node column the
// file is one node, named `node` (the caller passes the file's stem), unless
// its lines name their nodes as pdsh and clush print them ("gpu01: ..."),
// or dshbak and clush -b group them under host lists (smi_csv.cpp). The
// header may come again (once per node), the same each time. Bad input:
// the Diagnostic names the file and line.
std::expected<Inventory, util::Diagnostic> parse_nvidia_smi_csv(ByteSource& source, const InputSpec& input);
// `scontrol show node -o`: one node per line, Key=Value words (values such
// as OS= hold spaces). Nodes without a gpu Gres are not GPU nodes and are
// skipped.
std::expected<Inventory, util::Diagnostic> parse_scontrol_nodes(ByteSource& source, const InputSpec& input);
// `kubectl get nodes -o json` (a List of Node, or one Node), read as a
// stream: only each node's name and the GFD labels read below are kept.
// Nodes without GFD's nvidia.com/gpu.product label are skipped.
std::expected<Inventory, util::Diagnostic> parse_kubectl_nodes(ByteSource& source, const InputSpec& input);
// By content: a JSON object is kubectl's, a line starting NodeName=
// scontrol's, text that is none of the three formats (a JSON array, XML,
// YAML, `scontrol show job`, binary data) is named as what it is, anything
// else is read as nvidia-smi's CSV.
std::expected<Inventory, util::Diagnostic> parse_inventory(ByteSource& source, const InputSpec& input);

// The same from text in memory (tests, the fuzz target), with the default
// limits.
std::expected<Inventory, util::Diagnostic> parse_nvidia_smi_csv(std::string_view text, const std::string& file,
                                                                const std::string& node);
std::expected<Inventory, util::Diagnostic> parse_scontrol_nodes(std::string_view text, const std::string& file);
std::expected<Inventory, util::Diagnostic> parse_kubectl_nodes(std::string_view text, const std::string& file);
std::expected<Inventory, util::Diagnostic> parse_inventory(std::string_view text, const std::string& file,
                                                           const std::string& node);

// How nodes are grouped into tiers: by the set of compute capabilities of
// their GPUs (cc), or by that and their driver's branch, its major version
// (cc+driver: H100 nodes on 535.x and on 550.x become two tiers, each with
// its own `driver:`; nodes whose driver no source gives make one more).
enum class GroupBy { cc, cc_driver };
std::string_view to_string(GroupBy group_by);  // "cc", "cc+driver"
std::optional<GroupBy> parse_group_by(std::string_view text);

// A tier proposed from the inventory: the nodes whose GPUs have one set of
// compute capabilities (and, grouped by driver, one driver branch), with the
// oldest driver among them, and where they are: the Slurm partition,
// constraint and gres that select them, and the Kubernetes labels.
struct ProposedGpu {
  std::string name;                                 // the tables' product name, or the source's for a declared device
  std::optional<arch::ComputeCapability> declared;  // set for a product the tables lack: {name, cc}
  bool operator==(const ProposedGpu&) const = default;
};

struct ProposedTier {
  std::string name;                          // "h100", "a100-a30", "sm90"
  std::vector<arch::ComputeCapability> ccs;  // ascending
  std::optional<int> branch;                 // grouped by driver: its nodes' driver branch (550)
  std::vector<ProposedGpu> gpus;
  std::optional<util::Version> driver;          // the oldest; nullopt when no source of these nodes says
  std::vector<std::string> nodes;               // by name, as read
  std::vector<std::string> products;            // "NVIDIA H100 80GB HBM3 x8" per distinct product and count
  std::vector<std::string> drivers;             // every driver seen, ascending
  std::string partition;                        // a partition holding all of them (fewest others); empty: none
  std::string constraint;                       // Slurm features all of them have that set them apart
  std::string gres;                             // "gpu:h100:1", or "gpu:1" when their Gres types differ
  std::map<std::string, std::string> selector;  // Kubernetes labels that select exactly these nodes
  std::vector<std::string> notes;               // what could not be derived, and why
};

struct Proposal {
  std::vector<ProposedTier> tiers;  // by lowest compute capability, then driver branch
  std::vector<Problem> problems;    // nodes in no tier, and disagreements
  std::size_t nodes = 0;
};

// Tiers one import proposes at most: a cluster has a handful.
inline constexpr std::size_t k_max_tiers = 64;

// Every name in the proposal is valid UTF-8 (bytes that are not become
// \xNN); control characters are left to each renderer to escape. An error
// when the nodes would make more than k_max_tiers tiers.
std::expected<Proposal, std::string> propose_tiers(const Inventory& inventory, GroupBy group_by = GroupBy::cc);

// The `tiers:` stanza of orchestrate.yaml, each tier with a comment naming
// its nodes, products and drivers, and the problems as comments after it.
// Every value is a YAML double-quoted scalar and every comment one line,
// whatever the names hold: control characters are written as \xNN (YAML's
// escape, so the value parses back to the same text), and so no name adds
// a key, a tier or a line (render.cpp).
std::string render_tiers_yaml(const Proposal& proposal);

}  // namespace orc::inventory
