#pragma once
// What the inventory's parsers share (private to the module): a GPU as the
// tables know it, a node's GPUs added under the bounds, and a node found or
// made by name with its change counted against the input's budget.
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/inventory/inventory.hpp"

namespace orc::inventory::detail {

// GPUs one node may report, all kinds together (an NVL72 tray has 4).
inline constexpr unsigned k_max_node_gpus = 65'536;

// "9.0"; nullopt for "[N/A]" and "[Not Supported]".
std::optional<arch::ComputeCapability> reported_cc(std::string_view text);

// A GPU of a node: its CC from the source when given, else the tables'.
NodeGpu make_gpu(std::string product, std::optional<arch::ComputeCapability> reported, std::string reported_by,
                 unsigned count);

// Adds `gpu` to `node` (to the count of the same product and CC); empty, or
// why not: more than k_max_gpu_kinds kinds or k_max_node_gpus GPUs.
std::string add_gpu(Node& node, NodeGpu gpu);

// Empty while what the nodes (and problems) read take, with what earlier
// inputs hold, is within the input's budget; else what to do.
std::string over_budget(const Inventory& inventory, const InputSpec& input);

// One record's change to one node: the node named, made (with `file`) when
// the input has none of that name yet; done() counts its footprint change
// and says, when the nodes now take more than the input's budget, what to do.
class NodeEdit {
 public:
  NodeEdit(Inventory& inventory, const std::string& name, Source source, const std::string& file);
  Node& node() { return *m_node; }
  std::string done(const InputSpec& input);

 private:
  Inventory& m_inventory;
  Node* m_node = nullptr;
  std::uint64_t m_before = 0;
};

}  // namespace orc::inventory::detail
