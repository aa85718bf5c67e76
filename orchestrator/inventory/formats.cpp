// Which of the three formats an input is, by its first bytes, and the
// inventory's own bookkeeping: nodes by name, and what they take in memory.
#include <algorithm>

#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/inventory/reader.hpp"

namespace orc::inventory {

namespace {

using detail::InputReader;
using util::Diagnostic;

// What text that is none of the formats is, by its first bytes; empty when
// it may be one of them.
std::string not_a_format(std::string_view start) {
  if (start.find('\0') != std::string_view::npos) return "binary data (a NUL byte in its first bytes)";
  if (start.starts_with("[")) return "a JSON array";
  if (start.starts_with("<")) return "XML or HTML (nvidia-smi -q -x prints XML)";
  // "---" starts a YAML document; dshbak's and clush's rules are longer.
  if ((start.starts_with("---") && !start.starts_with("----")) || start.starts_with("apiVersion:") ||
      start.starts_with("kind:") || start.starts_with("items:"))
    return "YAML (kubectl -o yaml prints it)";
  if (start.starts_with("JobId=")) return "`scontrol show job` output (jobs, not nodes)";
  if (start.starts_with("PartitionName=")) return "`scontrol show partition` output (partitions, not nodes)";
  return {};
}

using Read = std::expected<Inventory, Diagnostic> (*)(InputReader&);

std::expected<Inventory, Diagnostic> from(ByteSource& source, const InputSpec& input, Read read) {
  InputReader in(source, input);
  in.skip_space();
  return read(in);
}

std::expected<Inventory, Diagnostic> from_text(std::string_view text, const std::string& file, const std::string& node,
                                               Read read) {
  TextSource source(text);
  return from(source, InputSpec{.file = file, .node = node, .limits = {}, .held = 0}, read);
}

}  // namespace

std::expected<Inventory, Diagnostic> parse_inventory(ByteSource& source, const InputSpec& input) {
  // The format is told from the first bytes after white space; the parser
  // chosen reads on from there, with the same line numbers.
  InputReader in(source, input);
  in.skip_space();
  const std::string_view start = in.peek(16);
  if (in.error()) return std::unexpected(*in.error());
  if (start.empty())
    return std::unexpected(
        detail::error_at(in, "empty: no GPU node in it (tiers import reads " + std::string(detail::k_formats) + ")"));
  if (const std::string what = not_a_format(start); !what.empty())
    return std::unexpected(
        detail::error_at(in, "this is " + what + "; tiers import reads " + std::string(detail::k_formats)));
  if (start.starts_with("{")) return detail::read_kubectl_nodes(in);
  if (start.starts_with("NodeName=")) return detail::read_scontrol_nodes(in);
  return detail::read_nvidia_smi_csv(in);
}

std::expected<Inventory, Diagnostic> parse_nvidia_smi_csv(ByteSource& source, const InputSpec& input) {
  return from(source, input, detail::read_nvidia_smi_csv);
}
std::expected<Inventory, Diagnostic> parse_scontrol_nodes(ByteSource& source, const InputSpec& input) {
  return from(source, input, detail::read_scontrol_nodes);
}
std::expected<Inventory, Diagnostic> parse_kubectl_nodes(ByteSource& source, const InputSpec& input) {
  return from(source, input, detail::read_kubectl_nodes);
}

std::expected<Inventory, Diagnostic> parse_nvidia_smi_csv(std::string_view text, const std::string& file,
                                                          const std::string& node) {
  return from_text(text, file, node, detail::read_nvidia_smi_csv);
}
std::expected<Inventory, Diagnostic> parse_scontrol_nodes(std::string_view text, const std::string& file) {
  return from_text(text, file, {}, detail::read_scontrol_nodes);
}
std::expected<Inventory, Diagnostic> parse_kubectl_nodes(std::string_view text, const std::string& file) {
  return from_text(text, file, {}, detail::read_kubectl_nodes);
}
std::expected<Inventory, Diagnostic> parse_inventory(std::string_view text, const std::string& file,
                                                     const std::string& node) {
  TextSource source(text);
  return parse_inventory(source, InputSpec{.file = file, .node = node, .limits = {}, .held = 0});
}

Node* Inventory::find(const std::string& name) {
  for (; m_indexed < nodes.size(); ++m_indexed) m_index.try_emplace(nodes[m_indexed].name, m_indexed);
  const auto it = m_index.find(name);
  return it == m_index.end() ? nullptr : &nodes[it->second];
}

Node& Inventory::add(Node node) {
  m_footprint += inventory::footprint(node);
  nodes.push_back(std::move(node));
  return nodes.back();
}

std::uint64_t footprint(const Node& n) {
  // The index's entry (a hash node, the name again) and the Node itself.
  std::uint64_t bytes =
      sizeof(Node) + 64 + 2 * n.name.size() + n.file.size() + n.gres.size() + n.sources.size() * sizeof(Source);
  for (const auto& g : n.gpus) bytes += sizeof(NodeGpu) + g.product.size() + g.canonical.size() + g.cc_from.size();
  for (const auto* list : {&n.partitions, &n.features})
    for (const auto& s : *list) bytes += sizeof(std::string) + s.size();
  for (const auto& [k, v] : n.labels) bytes += 64 + k.size() + v.size();
  if (n.driver) bytes += 32 + n.driver->size() * sizeof(int) + n.driver->str().size();
  return bytes;
}

}  // namespace orc::inventory
