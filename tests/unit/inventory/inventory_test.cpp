// The cluster inventory (issue 15): nvidia-smi CSV, `scontrol show node -o`
// and `kubectl get nodes -o json` read into nodes, merged by name, and the
// tiers proposed from them. The fixtures (data/README.md) are real output
// where we could run the tool (Slurm 22.05 here, nvidia-smi on the H200).
#include "orchestrator/inventory/inventory.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/unit/inventory/fixtures.hpp"

namespace orc::inventory {
namespace {

using testing::data;

Inventory read(const std::string& name, const std::string& node = "") {
  auto parsed = parse_inventory(data(name), name, node);
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().render());
  return parsed ? *parsed : Inventory{};
}

const Node* find(const Inventory& inv, const std::string& name) {
  const auto it = std::ranges::find(inv.nodes, name, &Node::name);
  return it == inv.nodes.end() ? nullptr : &*it;
}

TEST(InventoryNvidiaSmi, TheH200sOwnCsvIsOneNode) {
  const Inventory inv = read("gpu-h200.csv", "gpu-h200");
  ASSERT_EQ(inv.nodes.size(), 1u);
  const Node& n = inv.nodes[0];
  EXPECT_EQ(n.name, "gpu-h200");
  ASSERT_EQ(n.gpus.size(), 1u);
  EXPECT_EQ(n.gpus[0].product, "NVIDIA H200");
  EXPECT_EQ(n.gpus[0].canonical, "H200");
  EXPECT_EQ(n.gpus[0].cc, arch::ComputeCapability(9, 0));
  EXPECT_EQ(n.gpus[0].cc_from, "nvidia-smi compute_cap");
  EXPECT_EQ(n.driver, util::Version::parse("580.159.04").value());
  // --format=csv,noheader: the default column order.
  const auto noheader = parse_nvidia_smi_csv("NVIDIA H200, 9.0, 580.159.04\n", "x.csv", "x");
  ASSERT_TRUE(noheader);
  EXPECT_EQ(noheader->nodes[0].gpus[0].cc, arch::ComputeCapability(9, 0));
}

TEST(InventoryNvidiaSmi, PdshPrefixesAndANodeColumnNameTheNodes) {
  const Inventory pdsh = read("pdsh-nodes.csv");
  ASSERT_EQ(pdsh.nodes.size(), 5u);
  const Node* a01 = find(pdsh, "gpu-a01");
  ASSERT_TRUE(a01);
  ASSERT_EQ(a01->gpus.size(), 1u);
  EXPECT_EQ(a01->gpus[0].count, 2u);
  EXPECT_EQ(a01->gpus[0].canonical, "A100");
  const Node* x01 = find(pdsh, "gpu-x01");
  ASSERT_TRUE(x01);
  EXPECT_FALSE(x01->gpus[0].cc);  // [N/A] and no table row: not guessed

  const Inventory column = read("with-node-column.csv");
  ASSERT_EQ(column.nodes.size(), 5u);
  // No compute_cap column (drivers before it): the tables' CC, said as such.
  EXPECT_EQ(find(column, "ws01")->gpus[0].cc, arch::ComputeCapability(8, 9));
  EXPECT_EQ(find(column, "ws01")->gpus[0].cc_from, "the GPU tables");
  EXPECT_EQ(find(column, "old01")->gpus[0].canonical, "Tesla V100");
  EXPECT_FALSE(find(column, "odd01")->gpus[0].cc);
}

TEST(InventoryNvidiaSmi, BadLinesAreErrorsWithTheirLine) {
  auto bad = parse_nvidia_smi_csv("name, compute_cap, driver_version\nNVIDIA H100, nine, 550.1\n", "n.csv", "n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where.line, 2);
  EXPECT_NE(bad.error().message.find("compute_cap 'nine' is not a compute capability"), std::string::npos);
  bad = parse_nvidia_smi_csv("NVIDIA H100, 9.0, five-fifty\n", "n.csv", "n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("driver_version 'five-fifty' is no version"), std::string::npos);
  EXPECT_FALSE(parse_nvidia_smi_csv("\n\n", "empty.csv", "n"));
  // Text that is not the query's output: a field count that is not its own.
  bad = parse_nvidia_smi_csv("garbage line\n", "x.csv", "x");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("expected 3 comma-separated fields"), std::string::npos) << bad.error().message;
  bad = parse_nvidia_smi_csv("name, driver_version\nTesla T4, 535.1, extra\n", "x.csv", "x");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where.line, 2);
}

TEST(InventorySlurm, RealScontrolRecordsGiveGresFeaturesAndPartitions) {
  const Inventory inv = read("scontrol-cluster.txt");
  // cpu01 has no gpu Gres: not a GPU node.
  ASSERT_EQ(inv.nodes.size(), 5u);
  EXPECT_FALSE(find(inv, "cpu01"));
  const Node* a01 = find(inv, "gpu-a01");
  ASSERT_TRUE(a01);
  EXPECT_EQ(a01->partitions, (std::vector<std::string>{"gpu", "ampere"}));
  EXPECT_EQ(a01->features, (std::vector<std::string>{"sm_80", "ib"}));
  EXPECT_EQ(a01->gpus[0].count, 8u);
  EXPECT_EQ(a01->gpus[0].cc, arch::ComputeCapability(8, 0));
  // A gres type the tables do not know ("tesla"): the node's sm_75 feature says it.
  const Node* t01 = find(inv, "gpu-t01");
  EXPECT_EQ(t01->gpus[0].cc, arch::ComputeCapability(7, 5));
  EXPECT_EQ(t01->gpus[0].cc_from, "Slurm feature sm_75");
  const Node* l01 = find(inv, "gpu-l01");
  ASSERT_EQ(l01->gpus.size(), 2u);
  EXPECT_EQ(l01->gpus[0].canonical, "L40S");
  EXPECT_EQ(l01->gpus[1].canonical, "Tesla T4");
  // The suite's own cluster: OS= holds spaces and '#'.
  const Inventory suite = read("scontrol-suite.txt");
  ASSERT_EQ(suite.nodes.size(), 2u);
  EXPECT_EQ(suite.nodes[1].gres, "gpu:h100:2");
  EXPECT_EQ(suite.nodes[1].partitions, (std::vector<std::string>{"debug", "hopper"}));
  EXPECT_FALSE(parse_scontrol_nodes("Partitions=x\n", "bad.txt"));
}

TEST(InventoryKubernetes, GfdLabelsGiveTheCcTheDriverAndTheCount) {
  const Inventory inv = read("kubectl-nodes.json");
  ASSERT_EQ(inv.nodes.size(), 3u);  // k8s-cpu-0 has no GPU labels
  const Node* h = find(inv, "k8s-h100-0");
  EXPECT_EQ(h->gpus[0].canonical, "H100");
  EXPECT_EQ(h->gpus[0].count, 8u);
  EXPECT_EQ(h->gpus[0].cc_from, "GFD labels");
  EXPECT_EQ(h->driver, util::Version::parse("550.107.02").value());
  // Time-slicing's -SHARED suffix; the older driver labels.
  const Node* t4 = find(inv, "k8s-t4-shared");
  EXPECT_EQ(t4->gpus[0].canonical, "Tesla T4");
  EXPECT_EQ(t4->driver, util::Version::parse("535.104.05").value());
  EXPECT_FALSE(parse_kubectl_nodes("[1, 2]", "x.json"));
  EXPECT_FALSE(parse_kubectl_nodes("{\"kind\": \"Pod\"}", "x.json"));
}

// nvidia-smi (drivers) and Slurm (placement) on the same nodes, merged; the
// stanza pinned whole.
TEST(InventoryProposal, NodesMergedAcrossSourcesBecomeTiersWithTheirPlacement) {
  Inventory inv = read("pdsh-nodes.csv");
  inv.merge(read("scontrol-cluster.txt"));
  const Proposal p = propose_tiers(inv).value();
  EXPECT_EQ(render_tiers_yaml(p), R"(# orchestrate tiers import: 6 GPU nodes, 4 tiers
tiers:
  # t4: 1 node (gpu-t01); Tesla T4 x1; driver 535.104.05
  t4:
    gpus: ["Tesla T4"]
    driver: "535.104.05"
    slurm: {partition: "gpu", constraint: "sm_75", gres: "gpu:tesla:1"}
  # l40s-t4: 1 node (gpu-l01); l40s x2, t4 x1
  l40s-t4:
    gpus: ["L40S", "Tesla T4"]
    slurm: {partition: "gpu", gres: "gpu:l40s:1"}
    # no source gives these nodes' driver (Slurm does not record it): add `driver:` by hand
    # slurm: no node feature sets these nodes apart; the gres type or the partition selects them
  # a100: 2 nodes (gpu-a01, gpu-a02); NVIDIA A100-SXM4-80GB x2; drivers 535.104.05, 550.54.15
  a100:
    gpus: ["A100"]
    driver: "535.104.05"
    slurm: {partition: "ampere", constraint: "sm_80", gres: "gpu:a100:1"}
    # its nodes run 2 driver branches (535, 550): --group-by cc+driver makes a tier of each
  # h100: 1 node (gpu-h01); NVIDIA H100 80GB HBM3 x1; driver 550.54.15
  h100:
    gpus: ["H100"]
    driver: "550.54.15"
    slurm: {partition: "hopper", constraint: "sm_90", gres: "gpu:h100:1"}
# not placed, or reported differently by two sources:
#   gpu-x01 (pdsh-nodes.csv): 'NVIDIA Lab Accelerator X' is in no GPU table and nvidia-smi gave no compute_cap (older drivers, the 470 branch among them, lack the field): not placed; declare it in a tier as {name, cc}
)");
}

TEST(InventoryProposal, GfdNodesGetSelectorsAndUnknownProductsAreReported) {
  Inventory inv = read("kubectl-nodes.json");
  inv.merge(read("with-node-column.csv"));
  const Proposal p = propose_tiers(inv).value();
  std::vector<std::string> names;
  for (const auto& t : p.tiers) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"v100", "t4", "a30", "rtx-4090-rtx-6000-ada", "h100"}));
  const auto& h100 = p.tiers.back();
  EXPECT_EQ(h100.selector, (std::map<std::string, std::string>{{"nvidia.com/gpu.compute.major", "9"},
                                                               {"nvidia.com/gpu.compute.minor", "0"}}));
  EXPECT_EQ(h100.driver, util::Version::parse("550.107.02").value());
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_EQ(p.problems[0].node, "odd01");
  // Nodes with drivers 560.35.03 and 565.57.01: the oldest.
  EXPECT_EQ(p.tiers[3].driver, util::Version::parse("560.35.03").value());
  EXPECT_TRUE(p.tiers[3].selector.empty());
}

TEST(InventoryProposal, TwoSourcesThatDisagreeAreReported) {
  Inventory inv = read("gpu-h200.csv", "gpu-a01");
  inv.merge(read("scontrol-cluster.txt"));
  const Proposal p = propose_tiers(inv).value();
  ASSERT_FALSE(p.problems.empty());
  EXPECT_EQ(p.problems[0].node, "gpu-a01");
  EXPECT_NE(p.problems[0].message.find("the compute capability reported is kept"), std::string::npos)
      << p.problems[0].message;
}

}  // namespace
}  // namespace orc::inventory
