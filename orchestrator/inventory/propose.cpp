// Nodes merged across sources, grouped into tiers by compute-capability
// set (and driver branch, when asked), and where each tier's nodes are. Linear in the nodes (issue 28):
// groups, partitions, features and gres types are counted once over the
// whole inventory, and each tier is placed from those counts and its own
// members; only telling a tier's features apart from one other node's
// reads the other nodes, at most once per tier, and tiers are bounded.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/outside_names.hpp"
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

// "h100" from "H100", "rtx-4090" from "GeForce RTX 4090", "titan-x-pascal"
// from "TITAN X (Pascal)": only letters, digits and '-', as a tier name takes.
std::string name_word(const std::string& product) {
  std::string lower = util::to_lower(product);
  for (char& c : lower)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = ' ';
  std::vector<std::string> words;
  for (auto& w : util::split_any(lower, " "))
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

bool in_slurm(const Node& n) { return std::ranges::find(n.sources, Source::slurm) != n.sources.end(); }

// The types of a node's Slurm gpu Gres ("gpu:a100:8(S:0-1),gpu:t4:1": a100, t4), each once.
std::vector<std::string> gres_types(const Node& n) {
  std::vector<std::string> out;
  for (const auto& item : util::split_any(n.gres, ",")) {
    const auto parts = util::split_any(item.substr(0, item.find('(')), ":");
    if (parts.size() >= 3 && parts[0] == "gpu" && std::ranges::find(out, parts[1]) == out.end())
      out.push_back(parts[1]);
  }
  return out;
}

template <class Range>
std::set<std::string> distinct(const Range& range) {
  return std::set<std::string>(std::begin(range), std::end(range));
}

// What placing any tier in Slurm asks of the whole inventory, counted once:
// the nodes of each partition, and of the Slurm nodes with GPUs those that
// have each feature and each gres type.
struct SlurmCounts {
  std::unordered_map<std::string, std::size_t> partition_nodes;
  std::unordered_map<std::string, std::size_t> feature_nodes;
  std::unordered_map<std::string, std::size_t> gres_type_nodes;
  std::vector<const Node*> gpu_nodes;  // Slurm's, with GPUs
  explicit SlurmCounts(const Inventory& inventory) {
    for (const Node& n : inventory.nodes) {
      for (const auto& p : distinct(n.partitions)) ++partition_nodes[p];
      if (!in_slurm(n) || n.gpus.empty()) continue;
      gpu_nodes.push_back(&n);
      for (const auto& f : distinct(n.features)) ++feature_nodes[f];
      for (const auto& t : gres_types(n)) ++gres_type_nodes[t];
    }
  }
  static std::size_t of(const std::unordered_map<std::string, std::size_t>& counts, const std::string& key) {
    const auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  }
};

// Of `names`, those sbatch takes as words; the others noted, not proposed
// (the configuration would refuse them).
std::vector<std::string> sbatch_words(ProposedTier& tier, const std::string& what, std::vector<std::string> names) {
  std::vector<std::string> refused;
  std::erase_if(names, [&](const std::string& name) {
    if (util::sbatch_word(name)) return false;
    refused.push_back("'" + name + "'");
    return true;
  });
  const bool one = refused.size() == 1;
  if (!refused.empty())
    tier.notes.push_back("slurm: " + what + (one ? " " : "s ") + util::join(refused, ", ") +
                         (one ? " is not a word" : " are not words") +
                         " sbatch takes (letters, digits and _-.:,&|[]*=()!): left out");
  return names;
}

// Slurm: a partition holding every node of the tier (the one with the
// fewest nodes), the features all of them have and no other Slurm node has
// all of, and one gres type when they share it.
void place_in_slurm(ProposedTier& tier, const std::vector<const Node*>& members, const SlurmCounts& counts) {
  std::vector<const Node*> slurm;
  for (const Node* n : members)
    if (in_slurm(*n)) slurm.push_back(n);
  if (slurm.empty()) return;
  if (slurm.size() != members.size())
    tier.notes.push_back("slurm: only " + std::to_string(slurm.size()) + " of its " + std::to_string(members.size()) +
                         " nodes are in Slurm's records");
  // What every one of them has, in the first one's order.
  const auto common = [&](auto&& list_of) {
    std::vector<std::string> out;
    std::unordered_map<std::string, std::size_t> seen;
    for (const Node* n : slurm)
      for (const auto& x : distinct(list_of(*n))) ++seen[x];
    for (const auto& x : list_of(*slurm.front()))
      if (auto it = seen.find(x); it->second == slurm.size()) {
        out.push_back(x);
        it->second = 0;  // once
      }
    return out;
  };
  const std::vector<std::string> all_in = common([](const Node& n) -> const auto& { return n.partitions; });
  if (all_in.empty()) tier.notes.push_back("slurm: no partition holds all of its nodes");
  const std::vector<std::string> partitions = sbatch_words(tier, "partition", all_in);
  const std::vector<std::string> features =
      sbatch_words(tier, "feature", common([](const Node& n) -> const auto& { return n.features; }));
  for (const auto& p : partitions)
    if (tier.partition.empty() ||
        SlurmCounts::of(counts.partition_nodes, p) < SlurmCounts::of(counts.partition_nodes, tier.partition))
      tier.partition = p;
  // The others it must be told apart from: Slurm GPU nodes outside the tier.
  // Every member has each common feature, so the others with one are the
  // count beyond the members.
  const std::size_t others = counts.gpu_nodes.size() - slurm.size();
  std::vector<std::string> unique;
  for (const auto& f : features)
    if (SlurmCounts::of(counts.feature_nodes, f) == slurm.size()) unique.push_back(f);
  const auto another_has_all = [&] {
    const std::unordered_set<const Node*> own(members.begin(), members.end());
    const std::unordered_set<std::string> wanted(features.begin(), features.end());
    return std::ranges::any_of(counts.gpu_nodes, [&](const Node* o) {
      if (own.contains(o)) return false;
      std::size_t held = 0;
      for (const auto& f : distinct(o->features)) held += wanted.contains(f) ? 1 : 0;
      return held == wanted.size();
    });
  };
  if (!unique.empty())
    tier.constraint = util::join(unique, "&");
  else if (!features.empty() && !another_has_all())
    tier.constraint = util::join(features, "&");
  else if (others > 0)
    tier.notes.push_back("slurm: no node feature sets these nodes apart" +
                         std::string(features.empty() ? "" : " (others have " + util::join(features, ", ") + " too)") +
                         "; the gres type or the partition selects them");
  // A gres type every node of the tier has, preferring one no other node has.
  std::string type;
  for (const auto& t : sbatch_words(tier, "gres type", common(gres_types))) {
    const bool elsewhere = SlurmCounts::of(counts.gres_type_nodes, t) > slurm.size();
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
  for (const Node* n : labelled)
    if (const auto it = n->labels.find("nvidia.com/gpu.product"); it != n->labels.end()) products.insert(it->second);
  if (products.size() == 1 && util::label_value(*products.begin()))
    tier.selector["nvidia.com/gpu.product"] = *products.begin();
  else if (products.size() == 1)
    tier.notes.push_back("kubernetes: its nodes' product label '" + *products.begin() +
                         "' is no label value a selector takes; name a selector by hand");
  else
    tier.notes.push_back("kubernetes: its nodes share no GFD label that selects them all; name a selector by hand");
}

// The nodes of one tier, read into it: names, GPUs, products, drivers.
void collect(ProposedTier& tier, const std::vector<const Node*>& members, std::vector<std::string>& words) {
  std::set<std::pair<std::string, std::string>> gpus_seen;  // name, declared CC
  std::set<std::string> words_seen, products_seen;
  std::map<util::Version, std::string> drivers;
  for (const Node* n : members) {
    tier.nodes.push_back(n->name);
    for (const auto& g : n->gpus) {
      ProposedGpu gpu = g.canonical.empty() ? ProposedGpu{.name = g.product, .declared = g.cc}
                                            : ProposedGpu{.name = g.canonical, .declared = std::nullopt};
      if (gpus_seen.emplace(gpu.name, gpu.declared ? gpu.declared->dotted() : "").second)
        tier.gpus.push_back(std::move(gpu));
      const std::string w = g.canonical.empty() ? "sm" + g.cc->digits() : name_word(g.canonical);
      if (words_seen.insert(w).second) words.push_back(w);
      std::string product = g.product + " x" + std::to_string(g.count);
      if (products_seen.insert(product).second) tier.products.push_back(std::move(product));
    }
    if (n->driver) {
      if (!tier.driver || *n->driver < *tier.driver) tier.driver = n->driver;
      drivers.try_emplace(*n->driver, n->driver->str());
    }
  }
  for (auto& [version, text] : drivers) tier.drivers.push_back(std::move(text));
}

// The driver branches (majors) of the nodes, ascending, each once.
std::vector<std::string> driver_branches(const std::vector<const Node*>& members) {
  std::set<int> majors;
  for (const Node* n : members)
    if (n->driver) majors.insert(n->driver->major());
  std::vector<std::string> out;
  for (int m : majors) out.push_back(std::to_string(m));
  return out;
}

// Bytes YAML and JSON cannot hold (not UTF-8) as \xNN, in every name a
// proposal carries; control characters stay, for each renderer to escape.
void make_utf8(Proposal& p) {
  const auto fix = [](std::string& s) { s = util::utf8_escaped(s); };
  for (auto& t : p.tiers) {
    for (auto* list : {&t.nodes, &t.products, &t.notes})
      for (auto& s : *list) fix(s);
    for (auto& g : t.gpus) fix(g.name);
    for (auto* s : {&t.partition, &t.constraint, &t.gres}) fix(*s);
    std::map<std::string, std::string> selector;
    for (auto& [k, v] : t.selector) selector[util::utf8_escaped(k)] = util::utf8_escaped(v);
    t.selector = std::move(selector);
  }
  for (auto& problem : p.problems)
    for (auto* s : {&problem.node, &problem.file, &problem.message}) fix(*s);
}

}  // namespace

void Inventory::merge(Inventory other) {
  for (auto& p : other.problems) problems.push_back(std::move(p));
  for (auto& incoming : other.nodes) {
    Node* found = find(incoming.name);
    if (!found) {
      add(std::move(incoming));
      continue;
    }
    Node& n = *found;
    const std::uint64_t before = inventory::footprint(n);
    add_unique(n.sources, incoming.sources);
    if (incoming.driver && (!n.driver || *incoming.driver < *n.driver)) n.driver = incoming.driver;
    if (!incoming.partitions.empty()) n.partitions = incoming.partitions;
    if (!incoming.features.empty()) n.features = incoming.features;
    if (!incoming.gres.empty()) n.gres = incoming.gres;
    for (auto& [k, v] : incoming.labels) n.labels[k] = v;
    const auto mine = cc_set(n), theirs = cc_set(incoming);
    if (mine != theirs && !mine.empty() && !theirs.empty())
      problems.push_back({.node = n.name,
                          .file = incoming.file,
                          .message = "its GPUs are " + products_of(incoming) + " there but " + products_of(n) + " in " +
                                     n.file + ": the compute capability reported is kept"});
    // The GPUs of the source that reports a CC win over ones looked up.
    if (n.gpus.empty() || (reports_cc(incoming) && !reports_cc(n))) {
      // Slurm's gres types stay as the Slurm product names for the gres.
      if (std::ranges::find(incoming.sources, Source::slurm) == incoming.sources.end()) n.gpus = incoming.gpus;
    }
    account(before, inventory::footprint(n));
  }
}

std::string_view to_string(GroupBy group_by) { return group_by == GroupBy::cc ? "cc" : "cc+driver"; }

std::optional<GroupBy> parse_group_by(std::string_view text) {
  for (GroupBy g : {GroupBy::cc, GroupBy::cc_driver})
    if (text == to_string(g)) return g;
  return std::nullopt;
}

std::expected<Proposal, std::string> propose_tiers(const Inventory& inventory, GroupBy group_by) {
  Proposal out;
  out.problems = inventory.problems;
  out.nodes = inventory.nodes.size();
  // By CC set, then (grouped by driver) branch: nullopt, a driver no
  // source gives, sorts first.
  using Key = std::pair<std::vector<arch::ComputeCapability>, std::optional<int>>;
  std::map<Key, std::vector<const Node*>> groups;
  for (const Node& n : inventory.nodes) {
    std::vector<std::string> unknown;
    for (const auto& g : n.gpus)
      if (!g.cc) unknown.push_back("'" + g.product + "'");
    if (!unknown.empty()) {
      const bool smi = std::ranges::find(n.sources, Source::nvidia_smi) != n.sources.end();
      out.problems.push_back(
          {.node = n.name,
           .file = n.file,
           .message =
               util::join(unknown, ", ") + " is in no GPU table and " +
               (smi ? std::string(
                          "nvidia-smi gave no compute_cap (older drivers, the 470 branch among them, lack the field)")
                    : std::string("the source gives no compute capability")) +
               ": not placed; declare it in a tier as {name, cc}"});
      continue;
    }
    std::optional<int> branch;
    if (group_by == GroupBy::cc_driver && n.driver) branch = n.driver->major();
    groups[Key{cc_set(n), branch}].push_back(&n);
  }
  if (groups.size() > k_max_tiers)
    return std::unexpected(
        "these nodes have " + std::to_string(groups.size()) + " different sets of compute capabilities" +
        (group_by == GroupBy::cc ? "" : " and driver branches") + ", more than the " + std::to_string(k_max_tiers) +
        " tiers tiers import proposes: import a part of the cluster at a time");
  const SlurmCounts counts(inventory);
  std::set<std::string> names;
  for (const auto& [key, members] : groups) {
    ProposedTier tier{.ccs = key.first, .branch = key.second};
    std::vector<std::string> words;
    collect(tier, members, words);
    if (!tier.driver && !members.empty())
      tier.notes.push_back("no source gives these nodes' driver (Slurm does not record it): add `driver:` by hand");
    else if (tier.driver && std::ranges::any_of(members, [](const Node* n) { return !n->driver; }))
      tier.notes.push_back("the driver of some of its nodes is not known; the oldest known is used");
    if (const auto branches = driver_branches(members); group_by == GroupBy::cc && branches.size() > 1)
      tier.notes.push_back("its nodes run " + std::to_string(branches.size()) + " driver branches (" +
                           util::join(branches, ", ") + "): --group-by cc+driver makes a tier of each");
    if (tier.branch) words.push_back("r" + std::to_string(*tier.branch));
    std::string name = util::join(words, "-");
    for (int i = 2; names.contains(name); ++i) name = util::join(words, "-") + "-" + std::to_string(i);
    names.insert(name);
    tier.name = name;
    place_in_slurm(tier, members, counts);
    place_in_kubernetes(tier, members);
    out.tiers.push_back(std::move(tier));
  }
  make_utf8(out);
  return out;
}

}  // namespace orc::inventory
