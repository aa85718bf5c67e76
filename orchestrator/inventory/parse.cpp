// The three inventory formats, read into Nodes.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::inventory {

namespace {

using util::Diagnostic;

Diagnostic error_at(const std::string& file, int line, std::string message) {
  return Diagnostic{.where = {.file = file, .line = line, .col = 0}, .message = std::move(message)};
}

// The tables' row of a product as a source names it; GFD writes spaces as
// '-' and appends "-SHARED" (time-slicing) or "-MIG-1g.10gb" (a MIG slice).
std::optional<arch::Gpu> table_gpu(std::string product) {
  for (const char* suffix : {"-SHARED", "-MIG-"})
    if (const auto at = product.find(suffix); at != std::string::npos && at > 0) product.resize(at);
  auto gpu = arch::find_gpu(product);
  if (!gpu) return std::nullopt;
  return *gpu;
}

// A GPU of a node: its CC from the source when given, else the tables'.
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

void add_gpu(Node& node, NodeGpu gpu) {
  for (auto& g : node.gpus)
    if (g.product == gpu.product && g.cc == gpu.cc) {
      g.count += gpu.count;
      return;
    }
  node.gpus.push_back(std::move(gpu));
}

Node& node_named(Inventory& inventory, const std::string& name, Source source, const std::string& file) {
  for (auto& n : inventory.nodes)
    if (n.name == name) return n;
  inventory.nodes.push_back(Node{.name = name, .sources = {source}, .file = file});
  return inventory.nodes.back();
}

std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out;
  for (;;) {
    const auto comma = line.find(',');
    out.emplace_back(util::trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return out;
}

// "9.0"; nullopt for "[N/A]" and "[Not Supported]".
std::optional<arch::ComputeCapability> reported_cc(std::string_view text) {
  if (text.empty() || text.front() == '[') return std::nullopt;
  auto cc = arch::ComputeCapability::parse(text);
  if (!cc) return std::nullopt;
  return cc->base();
}

}  // namespace

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

std::expected<Inventory, Diagnostic> parse_nvidia_smi_csv(std::string_view text, const std::string& file,
                                                          const std::string& node) {
  Inventory out;
  int name_col = 0, cc_col = 1, driver_col = 2, node_col = -1;
  std::size_t columns = 3;  // the query's three, in its order, without a header
  bool header_seen = false;
  int line_no = 0;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (util::trim(line).empty() || util::trim(line).front() == '#') continue;
    // pdsh and clush prefix each line with "host: ".
    std::string prefix_node;
    if (const auto colon = line.find(": "); colon != std::string_view::npos && colon < line.find(',') &&
                                             line.substr(0, colon).find_first_of(" \t") == std::string_view::npos) {
      prefix_node = std::string(line.substr(0, colon));
      line.remove_prefix(colon + 2);
    }
    const std::vector<std::string> fields = csv_fields(line);
    if (!header_seen && std::ranges::any_of(fields, [](const std::string& f) { return util::to_lower(f) == "name"; })) {
      header_seen = true;
      columns = fields.size();
      name_col = cc_col = driver_col = node_col = -1;
      for (int i = 0; i < static_cast<int>(fields.size()); ++i) {
        const std::string f = util::to_lower(fields[static_cast<std::size_t>(i)]);
        if (f == "name") name_col = i;
        if (f == "compute_cap") cc_col = i;
        if (f == "driver_version") driver_col = i;
        if (f == "node" || f == "host" || f == "hostname") node_col = i;
      }
      continue;
    }
    header_seen = true;  // a header comes first or not at all
    const auto at = [&](int col) -> std::string {
      return col >= 0 && col < static_cast<int>(fields.size()) ? fields[static_cast<std::size_t>(col)] : "";
    };
    if (fields.size() != columns)
      return std::unexpected(error_at(file, line_no,
                                      "expected " + std::to_string(columns) + " comma-separated fields (nvidia-smi "
                                      "--query-gpu=name,compute_cap,driver_version --format=csv), found " +
                                      std::to_string(fields.size())));
    if (name_col >= static_cast<int>(fields.size()) || at(name_col).empty())
      return std::unexpected(error_at(file, line_no,
                                      "expected nvidia-smi --query-gpu=name,compute_cap,driver_version "
                                      "--format=csv output: this line has no GPU name"));
    std::string where = node_col >= 0 ? at(node_col) : !prefix_node.empty() ? prefix_node : node;
    if (where.empty())
      return std::unexpected(error_at(file, line_no, "no node column and no node name: add a 'node' column"));
    const std::string cc_text = at(cc_col);
    if (!cc_text.empty() && cc_text.front() != '[' && !reported_cc(cc_text))
      return std::unexpected(error_at(file, line_no, "compute_cap '" + util::printable(cc_text) +
                                                         "' is not a compute capability"));
    Node& n = node_named(out, where, Source::nvidia_smi, file);
    add_gpu(n, make_gpu(at(name_col), reported_cc(cc_text), "nvidia-smi compute_cap", 1));
    if (const std::string d = at(driver_col); !d.empty()) {
      auto driver = util::Version::parse(d);
      if (!driver)
        return std::unexpected(error_at(file, line_no, "driver_version '" + util::printable(d) + "' is no version"));
      if (!n.driver || *driver < *n.driver) n.driver = *driver;
    }
  }
  if (out.nodes.empty()) return std::unexpected(error_at(file, 1, "no GPU in this nvidia-smi CSV"));
  return out;
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

std::expected<Inventory, Diagnostic> parse_scontrol_nodes(std::string_view text, const std::string& file) {
  Inventory out;
  int line_no = 0;
  bool any = false;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_no;
    if (util::trim(line).empty()) continue;
    const auto fields = util::key_value_words(line);
    const auto name = fields.find("NodeName");
    if (name == fields.end())
      return std::unexpected(error_at(file, line_no,
                                      "expected `scontrol show node -o` output (one NodeName=... line per node)"));
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
        count = static_cast<unsigned>(std::stoul(parts.back()));
        parts.pop_back();
      }
      gpus.push_back(make_gpu(parts.size() >= 2 ? parts[1] : std::string(), std::nullopt, {}, count));
    }
    if (gpus.empty()) continue;
    Node& n = node_named(out, name->second, Source::slurm, file);
    n.gres = gres->second;
    n.partitions = list_of(fields, "Partitions");
    n.features = list_of(fields, fields.contains("AvailableFeatures") ? "AvailableFeatures" : "Features");
    // A Gres without a known type: the node's one sm_XX feature, where its
    // administrator set one, says the CC (Slurm reports it; nothing is guessed).
    std::vector<arch::ComputeCapability> sm_features;
    for (const auto& f : n.features)
      if (f.starts_with("sm_"))
        if (auto cc = arch::ComputeCapability::parse(f)) sm_features.push_back(cc->base());
    for (auto& g : gpus) {
      if (!g.cc && sm_features.size() == 1) {
        g.cc = sm_features.front();
        g.cc_from = "Slurm feature " + sm_features.front().sm();
      }
      add_gpu(n, std::move(g));
    }
  }
  if (!any) return std::unexpected(error_at(file, 1, "no node in this `scontrol show node -o` output"));
  return out;
}

std::expected<Inventory, Diagnostic> parse_kubectl_nodes(std::string_view text, const std::string& file) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object())
    return std::unexpected(error_at(file, 1, "expected `kubectl get nodes -o json` output (a JSON List of Node)"));
  std::vector<nlohmann::json> items;
  if (json.value("kind", "") == "Node")
    items.push_back(json);
  else if (json.contains("items") && json["items"].is_array())
    items = json["items"].get<std::vector<nlohmann::json>>();
  else
    return std::unexpected(error_at(file, 1, "expected `kubectl get nodes -o json` output: no 'items'"));
  Inventory out;
  for (const auto& item : items) {
    const auto& meta = item.value("metadata", nlohmann::json::object());
    const std::string name = meta.value("name", "");
    const auto& raw = meta.value("labels", nlohmann::json::object());
    std::map<std::string, std::string> labels;
    for (auto it = raw.begin(); it != raw.end(); ++it)
      if (it.key().starts_with("nvidia.com/") && it->is_string()) labels[it.key()] = it->get<std::string>();
    const auto label = [&](const std::string& key) -> std::string {
      const auto it = labels.find(key);
      return it == labels.end() ? std::string() : it->second;
    };
    if (name.empty() || label("nvidia.com/gpu.product").empty()) continue;
    std::optional<arch::ComputeCapability> cc;
    if (!label("nvidia.com/gpu.compute.major").empty())
      cc = reported_cc(label("nvidia.com/gpu.compute.major") + "." + label("nvidia.com/gpu.compute.minor"));
    unsigned count = 1;
    if (const std::string c = label("nvidia.com/gpu.count");
        !c.empty() && c.size() < 6 && std::ranges::all_of(c, ::isdigit))
      count = static_cast<unsigned>(std::stoul(c));
    Node& n = node_named(out, name, Source::kubernetes, file);
    add_gpu(n, make_gpu(label("nvidia.com/gpu.product"), cc, "GFD labels", count));
    // GFD 0.15 and later: cuda.driver-version.full; before: major, minor, rev.
    const std::string full = label("nvidia.com/cuda.driver-version.full");
    const std::string major = label("nvidia.com/cuda.driver.major");
    if (!full.empty()) {
      if (auto d = util::Version::parse(full)) n.driver = *d;
    } else if (!major.empty()) {
      std::string text = major + "." + label("nvidia.com/cuda.driver.minor");
      if (!label("nvidia.com/cuda.driver.rev").empty()) text += "." + label("nvidia.com/cuda.driver.rev");
      if (auto d = util::Version::parse(text)) n.driver = *d;
    }
    n.labels = std::move(labels);
  }
  return out;
}

std::expected<Inventory, Diagnostic> parse_inventory(std::string_view text, const std::string& file,
                                                     const std::string& node) {
  const std::string_view start = util::trim(text);
  if (start.starts_with("{")) return parse_kubectl_nodes(text, file);
  if (start.starts_with("NodeName=")) return parse_scontrol_nodes(text, file);
  return parse_nvidia_smi_csv(text, file, node);
}

}  // namespace orc::inventory
