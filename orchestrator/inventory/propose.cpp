// Nodes merged across sources, grouped into tiers by compute-capability
// set, and where each tier's nodes are.
#include <algorithm>
#include <set>

#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::inventory {

namespace {

bool reports_cc(const Node& n) {
  return std::ranges::any_of(n.gpus, [](const NodeGpu& g) { return g.cc && g.cc_from != "the GPU tables"; });
}

std::string products_of(const Node& n) {
  std::vector<std::string> out;
  for (const auto& g : n.gpus) out.push_back(g.canonical.empty() ? g.product : g.canonical);
  return util::join(out, ", ");
}

template <class T>
void add_unique(std::vector<T>& to, const std::vector<T>& from) {
  for (const auto& x : from)
    if (std::ranges::find(to, x) == to.end()) to.push_back(x);
}

// "h100" from "H100", "rtx-4090" from "GeForce RTX 4090".
std::string name_word(const std::string& product) {
  std::vector<std::string> words;
  for (auto& w : util::split_any(util::to_lower(product), " -_"))
    if (w != "geforce" && w != "nvidia" && w != "tesla" && w != "quadro") words.push_back(w);
  return util::join(words, "-");
}

std::vector<arch::ComputeCapability> cc_set(const Node& n) {
  std::vector<arch::ComputeCapability> out;
  for (const auto& g : n.gpus)
    if (g.cc && std::ranges::find(out, *g.cc) == out.end()) out.push_back(*g.cc);
  std::ranges::sort(out);
  return out;
}

// A YAML double-quoted scalar.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The types of a node's Slurm gpu Gres ("gpu:a100:8(S:0-1),gpu:t4:1": a100, t4).
std::vector<std::string> gres_types(const Node& n) {
  std::vector<std::string> out;
  for (const auto& item : util::split_any(n.gres, ",")) {
    const auto parts = util::split_any(item.substr(0, item.find('(')), ":");
    if (parts.size() >= 3 && parts[0] == "gpu" && std::ranges::find(out, parts[1]) == out.end()) out.push_back(parts[1]);
  }
  return out;
}

// Slurm: a partition holding every node of the tier (the one with the
// fewest nodes), the features all of them have and no other Slurm node has
// all of, and one gres type when they share it.
void place_in_slurm(ProposedTier& tier, const std::vector<const Node*>& members, const Inventory& inventory) {
  std::vector<const Node*> slurm;
  for (const Node* n : members)
    if (std::ranges::find(n->sources, Source::slurm) != n->sources.end()) slurm.push_back(n);
  if (slurm.empty()) return;
  if (slurm.size() != members.size())
    tier.notes.push_back("slurm: only " + std::to_string(slurm.size()) + " of its " + std::to_string(members.size()) +
                         " nodes are in Slurm's records");
  std::vector<std::string> partitions = slurm.front()->partitions;
  std::vector<std::string> features = slurm.front()->features;
  for (const Node* n : slurm) {
    std::erase_if(partitions, [&](const std::string& p) { return std::ranges::find(n->partitions, p) == n->partitions.end(); });
    std::erase_if(features, [&](const std::string& f) { return std::ranges::find(n->features, f) == n->features.end(); });
  }
  const auto size_of = [&](const std::string& partition) {
    return std::ranges::count_if(inventory.nodes, [&](const Node& n) {
      return std::ranges::find(n.partitions, partition) != n.partitions.end();
    });
  };
  for (const auto& p : partitions)
    if (tier.partition.empty() || size_of(p) < size_of(tier.partition)) tier.partition = p;
  if (tier.partition.empty()) tier.notes.push_back("slurm: no partition holds all of its nodes");
  // The others it must be told apart from: Slurm GPU nodes outside the tier.
  std::vector<const Node*> others;
  for (const Node& n : inventory.nodes)
    if (std::ranges::find(n.sources, Source::slurm) != n.sources.end() &&
        std::ranges::find(members, &n) == members.end() && !n.gpus.empty())
      others.push_back(&n);
  // Features no other node has, else the whole common set when no other
  // node has all of it.
  std::vector<std::string> unique;
  for (const auto& f : features)
    if (std::ranges::none_of(others, [&](const Node* o) { return std::ranges::find(o->features, f) != o->features.end(); }))
      unique.push_back(f);
  const auto has_all = [&](const Node* o) {
    return std::ranges::all_of(features,
                               [&](const std::string& f) { return std::ranges::find(o->features, f) != o->features.end(); });
  };
  if (!unique.empty())
    tier.constraint = util::join(unique, "&");
  else if (!features.empty() && std::ranges::none_of(others, has_all))
    tier.constraint = util::join(features, "&");
  else if (!others.empty())
    tier.notes.push_back("slurm: no node feature sets these nodes apart" +
                         std::string(features.empty() ? "" : " (others have " + util::join(features, ", ") + " too)") +
                         "; the gres type or the partition selects them");
  // A gres type every node of the tier has, preferring one no other node has.
  std::vector<std::string> common = gres_types(*slurm.front());
  for (const Node* n : slurm) {
    const auto mine = gres_types(*n);
    std::erase_if(common, [&](const std::string& t) { return std::ranges::find(mine, t) == mine.end(); });
  }
  std::string type;
  for (const auto& t : common) {
    const bool elsewhere = std::ranges::any_of(others, [&](const Node* o) {
      const auto theirs = gres_types(*o);
      return std::ranges::find(theirs, t) != theirs.end();
    });
    if (type.empty() || !elsewhere) type = t;
    if (!elsewhere) break;
  }
  tier.gres = type.empty() ? "gpu:1" : "gpu:" + type + ":1";
}

// Kubernetes: GFD's compute-capability labels for a tier of one CC, else
// one product label they share.
void place_in_kubernetes(ProposedTier& tier, const std::vector<const Node*>& members) {
  std::vector<const Node*> labelled;
  for (const Node* n : members)
    if (!n->labels.empty()) labelled.push_back(n);
  if (labelled.empty()) return;
  if (labelled.size() != members.size())
    tier.notes.push_back("kubernetes: only " + std::to_string(labelled.size()) + " of its " +
                         std::to_string(members.size()) + " nodes have GFD labels");
  if (tier.ccs.size() == 1) {
    tier.selector["nvidia.com/gpu.compute.major"] = std::to_string(tier.ccs.front().major());
    tier.selector["nvidia.com/gpu.compute.minor"] = std::to_string(tier.ccs.front().minor());
    return;
  }
  std::set<std::string> products;
  for (const Node* n : labelled) products.insert(n->labels.at("nvidia.com/gpu.product"));
  if (products.size() == 1)
    tier.selector["nvidia.com/gpu.product"] = *products.begin();
  else
    tier.notes.push_back("kubernetes: its nodes share no GFD label that selects them all; name a selector by hand");
}

}  // namespace

void Inventory::merge(Inventory other) {
  for (auto& p : other.problems) problems.push_back(std::move(p));
  for (auto& incoming : other.nodes) {
    const auto it = std::ranges::find(nodes, incoming.name, &Node::name);
    if (it == nodes.end()) {
      nodes.push_back(std::move(incoming));
      continue;
    }
    Node& n = *it;
    add_unique(n.sources, incoming.sources);
    if (incoming.driver && (!n.driver || *incoming.driver < *n.driver)) n.driver = incoming.driver;
    if (!incoming.partitions.empty()) n.partitions = incoming.partitions;
    if (!incoming.features.empty()) n.features = incoming.features;
    if (!incoming.gres.empty()) n.gres = incoming.gres;
    for (auto& [k, v] : incoming.labels) n.labels[k] = v;
    if (cc_set(n) != cc_set(incoming) && !cc_set(n).empty() && !cc_set(incoming).empty())
      problems.push_back({.node = n.name,
                          .file = incoming.file,
                          .message = "its GPUs are " + products_of(incoming) + " there but " + products_of(n) +
                                     " in " + n.file + ": the compute capability reported is kept"});
    // The GPUs of the source that reports a CC win over ones looked up.
    if (n.gpus.empty() || (reports_cc(incoming) && !reports_cc(n))) {
      // Slurm's gres types stay as the Slurm product names for the gres.
      if (std::ranges::find(incoming.sources, Source::slurm) == incoming.sources.end()) n.gpus = incoming.gpus;
    }
  }
}

Proposal propose_tiers(const Inventory& inventory) {
  Proposal out;
  out.problems = inventory.problems;
  out.nodes = inventory.nodes.size();
  std::vector<std::pair<std::vector<arch::ComputeCapability>, std::vector<const Node*>>> groups;
  for (const Node& n : inventory.nodes) {
    std::vector<std::string> unknown;
    for (const auto& g : n.gpus)
      if (!g.cc) unknown.push_back("'" + g.product + "'");
    if (!unknown.empty()) {
      const bool smi = std::ranges::find(n.sources, Source::nvidia_smi) != n.sources.end();
      out.problems.push_back(
          {.node = n.name,
           .file = n.file,
           .message = util::join(unknown, ", ") + " is in no GPU table and " +
                      (smi ? std::string("nvidia-smi gave no compute_cap (older drivers, the 470 branch among them, lack the field)")
                           : std::string("the source gives no compute capability")) +
                      ": not placed; declare it in a tier as {name, cc}"});
      continue;
    }
    const auto ccs = cc_set(n);
    const auto it = std::ranges::find(groups, ccs, &decltype(groups)::value_type::first);
    if (it == groups.end())
      groups.emplace_back(ccs, std::vector<const Node*>{&n});
    else
      it->second.push_back(&n);
  }
  std::ranges::sort(groups, {}, &decltype(groups)::value_type::first);
  std::set<std::string> names;
  for (const auto& [ccs, members] : groups) {
    ProposedTier tier{.ccs = ccs};
    std::vector<std::string> words;
    for (const Node* n : members) {
      tier.nodes.push_back(n->name);
      for (const auto& g : n->gpus) {
        ProposedGpu gpu = g.canonical.empty() ? ProposedGpu{.name = g.product, .declared = g.cc}
                                              : ProposedGpu{.name = g.canonical, .declared = std::nullopt};
        if (std::ranges::find(tier.gpus, gpu) == tier.gpus.end()) tier.gpus.push_back(std::move(gpu));
        const std::string w = g.canonical.empty() ? "sm" + g.cc->digits() : name_word(g.canonical);
        if (std::ranges::find(words, w) == words.end()) words.push_back(w);
        const std::string product = g.product + " x" + std::to_string(g.count);
        if (std::ranges::find(tier.products, product) == tier.products.end()) tier.products.push_back(product);
      }
      if (n->driver) {
        if (!tier.driver || *n->driver < *tier.driver) tier.driver = n->driver;
        if (std::ranges::find(tier.drivers, n->driver->str()) == tier.drivers.end())
          tier.drivers.push_back(n->driver->str());
      }
    }
    std::ranges::sort(tier.drivers, [](const std::string& a, const std::string& b) {
      return *util::Version::parse(a) < *util::Version::parse(b);
    });
    if (!tier.driver && !members.empty())
      tier.notes.push_back("no source gives these nodes' driver (Slurm does not record it): add `driver:` by hand");
    else if (tier.driver && std::ranges::any_of(members, [](const Node* n) { return !n->driver; }))
      tier.notes.push_back("the driver of some of its nodes is not known; the oldest known is used");
    std::string name = util::join(words, "-");
    for (int i = 2; names.contains(name); ++i) name = util::join(words, "-") + "-" + std::to_string(i);
    names.insert(name);
    tier.name = name;
    place_in_slurm(tier, members, inventory);
    place_in_kubernetes(tier, members);
    out.tiers.push_back(std::move(tier));
  }
  return out;
}

std::string render_tiers_yaml(const Proposal& proposal) {
  std::string out = "# orchestrate tiers import: " + std::to_string(proposal.nodes) + " GPU node" +
                    (proposal.nodes == 1 ? "" : "s") + ", " + std::to_string(proposal.tiers.size()) + " tier" +
                    (proposal.tiers.size() == 1 ? "" : "s") + "\ntiers:\n";
  if (proposal.tiers.empty()) out = out.substr(0, out.size() - 7) + "tiers: {}\n";
  for (const auto& t : proposal.tiers) {
    out += "  # " + t.name + ": " + std::to_string(t.nodes.size()) + " node" + (t.nodes.size() == 1 ? "" : "s") +
           " (" + util::join(t.nodes, ", ") + "); " + util::join(t.products, ", ");
    if (!t.drivers.empty()) out += "; driver" + std::string(t.drivers.size() == 1 ? " " : "s ") + util::join(t.drivers, ", ");
    std::vector<std::string> gpus;
    for (const auto& g : t.gpus)
      gpus.push_back(g.declared ? "{name: " + quoted(g.name) + ", cc: " + quoted(g.declared->dotted()) + "}"
                                : quoted(g.name));
    out += "\n  " + t.name + ":\n    gpus: [" + util::join(gpus, ", ") + "]\n";
    if (t.driver) out += "    driver: \"" + t.driver->str() + "\"\n";
    std::vector<std::string> slurm;
    if (!t.partition.empty()) slurm.push_back("partition: " + t.partition);
    if (!t.constraint.empty()) slurm.push_back("constraint: " + quoted(t.constraint));
    if (!t.gres.empty()) slurm.push_back("gres: " + quoted(t.gres));
    if (!slurm.empty()) out += "    slurm: {" + util::join(slurm, ", ") + "}\n";
    if (!t.selector.empty()) {
      std::vector<std::string> labels;
      for (const auto& [k, v] : t.selector) labels.push_back(quoted(k) + ": " + quoted(v));
      out += "    kubernetes: {selector: {" + util::join(labels, ", ") + "}}\n";
    }
    for (const auto& note : t.notes) out += "    # " + note + "\n";
  }
  if (!proposal.problems.empty()) {
    out += "# not placed, or reported differently by two sources:\n";
    for (const auto& p : proposal.problems) out += "#   " + p.node + " (" + p.file + "): " + p.message + "\n";
  }
  return out;
}

}  // namespace orc::inventory
