// `scontrol show node -o` read into Nodes line by line, and what the
// readers share (smi_csv.cpp, kubectl.cpp): a GPU looked up in the tables,
// nodes found by name and counted against the budget.
#include <algorithm>
#include <charconv>

#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/inventory/parse_common.hpp"
#include "orchestrator/inventory/reader.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::inventory {

namespace detail {

namespace {

// The tables' row of a product as a source names it; GFD writes spaces as
// '-' and appends "-SHARED" (time-slicing) or "-MIG-1g.10gb" (a MIG slice).
std::optional<arch::Gpu> table_gpu(std::string product) {
  for (const char* suffix : {"-SHARED", "-MIG-"})
    if (const auto at = product.find(suffix); at != std::string::npos && at > 0) product.resize(at);
  auto gpu = arch::find_gpu(product);
  if (!gpu) return std::nullopt;
  return *gpu;
}

}  // namespace

std::optional<arch::ComputeCapability> reported_cc(std::string_view text) {
  if (text.empty() || text.front() == '[') return std::nullopt;
  auto cc = arch::ComputeCapability::parse(text);
  // "4.2" parses, but no GPU or compiler has it: a tier cannot be made of it.
  if (!cc || arch::cc_standing(cc->base()) == arch::CcStanding::none) return std::nullopt;
  return cc->base();
}

NodeGpu make_gpu(std::string product, std::optional<arch::ComputeCapability> reported, std::string reported_by,
                 unsigned count) {
  NodeGpu gpu{.product = std::move(product), .canonical = {}, .cc = reported, .cc_from = {}, .count = count};
  if (reported) gpu.cc_from = std::move(reported_by);
  if (const auto row = table_gpu(gpu.product)) {
    gpu.canonical = std::string(row->name);
    if (!gpu.cc) {
      gpu.cc = row->cc;
      gpu.cc_from = "the GPU tables";
    }
  }
  return gpu;
}

std::string add_gpu(Node& node, NodeGpu gpu) {
  for (auto& g : node.gpus)
    if (g.product == gpu.product && g.cc == gpu.cc) {
      if (g.count + std::uint64_t{gpu.count} > k_max_node_gpus)
        return "node '" + util::printable(node.name) + "' would have more than " + std::to_string(k_max_node_gpus) +
               " GPUs";
      g.count += gpu.count;
      return {};
    }
  if (node.gpus.size() == k_max_gpu_kinds)
    return "node '" + util::printable(node.name) + "' would have more than " + std::to_string(k_max_gpu_kinds) +
           " kinds of GPU (products or compute capabilities); no node has that many";
  node.gpus.push_back(std::move(gpu));
  return {};
}

NodeEdit::NodeEdit(Inventory& inventory, const std::string& name, Source source, const std::string& file)
    : m_inventory(inventory) {
  m_node = inventory.find(name);
  if (m_node) {
    if (std::ranges::find(m_node->sources, source) == m_node->sources.end()) m_node->sources.push_back(source);
  } else {
    m_node = &inventory.add(Node{.name = name, .sources = {source}, .file = file});
  }
  m_before = footprint(*m_node);
}

std::string NodeEdit::done(const InputSpec& input) {
  m_inventory.account(m_before, footprint(*m_node));
  return over_budget(m_inventory, input);
}

std::string over_budget(const Inventory& inventory, const InputSpec& input) {
  if (input.held + inventory.footprint() <= input.limits.node_bytes) return {};
  return "the nodes read take more than " + util::human_size(input.limits.node_bytes) + " of memory (" +
         std::to_string(inventory.nodes.size()) +
         " nodes in this input so far): give tiers import a part of the inventory at a time (a partition, a "
         "namespace)";
}

}  // namespace detail

using detail::add_gpu;
using detail::error_at;
using detail::InputReader;
using detail::make_gpu;
using detail::NodeEdit;
using util::Diagnostic;

std::string_view to_string(Source source) {
  switch (source) {
    case Source::nvidia_smi:
      return "nvidia-smi";
    case Source::slurm:
      return "slurm";
    case Source::kubernetes:
      return "kubernetes";
  }
  return "?";
}

namespace {

// Splits on commas outside parentheses: "gpu:a100:2(S:0,1),gpu:t4:1".
std::vector<std::string> gres_items(std::string_view gres) {
  std::vector<std::string> out;
  int depth = 0;
  std::string current;
  for (char c : gres) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

std::vector<std::string> list_of(const std::map<std::string, std::string>& fields, const std::string& key) {
  const auto it = fields.find(key);
  if (it == fields.end() || it->second == "(null)") return {};
  return util::split_any(it->second, ",");
}

}  // namespace

std::expected<Inventory, Diagnostic> detail::read_scontrol_nodes(InputReader& in) {
  const InputSpec& input = in.input();
  Inventory out;
  bool any = false;
  for (std::string_view line; in.line(line);) {
    if (util::trim(line).empty()) continue;
    const auto fields = util::key_value_words(line);
    const auto name = fields.find("NodeName");
    if (name == fields.end())
      return std::unexpected(error_at(in, "expected `scontrol show node -o` output (one NodeName=... line per node)"));
    any = true;
    const auto gres = fields.find("Gres");
    if (gres == fields.end() || gres->second == "(null)") continue;
    std::vector<NodeGpu> gpus;
    for (const std::string& item : gres_items(gres->second)) {
      // gpu[:type]:count[(S:...)]
      std::string spec = item.substr(0, item.find('('));
      std::vector<std::string> parts = util::split_any(spec, ":");
      if (parts.empty() || parts[0] != "gpu") continue;
      unsigned count = 1;
      if (parts.size() >= 2 && std::ranges::all_of(parts.back(), ::isdigit)) {
        const std::string& digits = parts.back();
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
        if (ec != std::errc{} || count > k_max_node_gpus)
          return std::unexpected(error_at(in, "Gres '" + util::printable(item) + "' counts more GPUs than a node has"));
        parts.pop_back();
      }
      gpus.push_back(make_gpu(parts.size() >= 2 ? parts[1] : std::string(), std::nullopt, {}, count));
    }
    if (gpus.empty()) continue;
    NodeEdit edit(out, name->second, Source::slurm, input.file);
    Node& n = edit.node();
    n.gres = gres->second;
    n.partitions = list_of(fields, "Partitions");
    n.features = list_of(fields, fields.contains("AvailableFeatures") ? "AvailableFeatures" : "Features");
    // A Gres without a known type: the node's one sm_XX feature, where its
    // administrator set one, says the CC (Slurm reports it; nothing is guessed).
    std::vector<arch::ComputeCapability> sm_features;
    for (const auto& f : n.features)
      if (f.starts_with("sm_"))
        if (auto cc = arch::ComputeCapability::parse(f); cc && arch::cc_standing(cc->base()) != arch::CcStanding::none)
          sm_features.push_back(cc->base());
    for (auto& g : gpus) {
      if (!g.cc && sm_features.size() == 1) {
        g.cc = sm_features.front();
        g.cc_from = "Slurm feature " + sm_features.front().sm();
      }
      if (std::string problem = add_gpu(n, std::move(g)); !problem.empty())
        return std::unexpected(error_at(in, std::move(problem)));
    }
    if (std::string problem = edit.done(input); !problem.empty())
      return std::unexpected(error_at(in, std::move(problem)));
  }
  if (in.error()) return std::unexpected(*in.error());
  if (!any) return std::unexpected(detail::error_in(input, "no node in this `scontrol show node -o` output"));
  return out;
}

}  // namespace orc::inventory
