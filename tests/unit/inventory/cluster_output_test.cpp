// Issue 29, point 6: inventory as it comes from clusters. The query tiers
// import's help suggests, run through pdsh (its header once per node: "line
// 3: compute_cap 'compute_cap' is not a compute capability" before), dshbak,
// clush and clubak, as those tools printed it (data/README.md); the host
// lists they print; and tiers grouped by compute capability and driver branch.
#include <gtest/gtest.h>

#include <algorithm>

#include "orchestrator/inventory/hostlist.hpp"
#include "orchestrator/inventory/inventory.hpp"
#include "tests/unit/inventory/fixtures.hpp"

namespace orc::inventory {
namespace {

using testing::data;

std::expected<Inventory, util::Diagnostic> parse(const std::string& text, Limits limits = {}) {
  TextSource source(text);
  return parse_inventory(source, InputSpec{.file = "in.txt", .node = "in", .limits = limits, .held = 0});
}

// "name: product cc driver", one per GPU, in the order read.
std::vector<std::string> described(const Inventory& inv) {
  std::vector<std::string> out;
  for (const Node& n : inv.nodes)
    for (const NodeGpu& g : n.gpus)
      out.push_back(n.name + ": " + g.product + " " + (g.cc ? g.cc->dotted() : "?") + " x" + std::to_string(g.count) +
                    " " + (n.driver ? n.driver->str() : "?"));
  std::ranges::sort(out);
  return out;
}

const std::vector<std::string> k_three_h200s = {"gpu-h200-01: NVIDIA H200 9.0 x1 580.159.04",
                                                "gpu-h200-02: NVIDIA H200 9.0 x1 580.159.04",
                                                "gpu-h200-03: NVIDIA H200 9.0 x1 580.159.04"};

TEST(InventoryClusterOutput, ThePdshOutputOfTheHelpsQueryIsOneNodePerHost) {
  for (const char* file : {"pdsh-format-csv.txt", "clush.txt"}) {
    const auto inv = parse(data(file));
    ASSERT_TRUE(inv) << file << ": " << inv.error().render();
    EXPECT_EQ(described(*inv), k_three_h200s) << file;
    EXPECT_TRUE(inv->problems.empty()) << file;
  }
}

TEST(InventoryClusterOutput, DshbakAndClushHostListsGiveEachNodeItsLines) {
  for (const char* file : {"dshbak.txt", "dshbak-c.txt", "clush-b.txt", "clubak-b.txt"}) {
    const auto inv = parse(data(file));
    ASSERT_TRUE(inv) << file << ": " << inv.error().render();
    EXPECT_EQ(described(*inv), k_three_h200s) << file;
  }
  // Two blocks, one of them shared by three nodes: every node once.
  const auto mixed = parse(
      "----------------\nn[1-2],login3\n----------------\nname, compute_cap, driver_version\nTesla T4, 7.5, "
      "535.104.05\nTesla T4, 7.5, 535.104.05\n----------------\nn4\n----------------\nname, compute_cap, "
      "driver_version\nNVIDIA H100 80GB HBM3, 9.0, 550.54.15\n");
  ASSERT_TRUE(mixed) << mixed.error().render();
  EXPECT_EQ(described(*mixed),
            (std::vector<std::string>{"login3: Tesla T4 7.5 x2 535.104.05", "n1: Tesla T4 7.5 x2 535.104.05",
                                      "n2: Tesla T4 7.5 x2 535.104.05", "n4: NVIDIA H100 80GB HBM3 9.0 x1 550.54.15"}));
}

TEST(InventoryClusterOutput, AHeaderAgainWithoutNodeNamesIsRefusedWithWhatToDo) {
  const auto n = parse(data("pdsh-N.txt"));
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().where.line, 3);
  EXPECT_NE(n.error().message.find("the header again, and no node name on the lines: the output of several nodes "
                                   "without their names (pdsh -N, or files joined with cat)"),
            std::string::npos)
      << n.error().message;
  // A header unlike the first: two queries in one input.
  const auto two = parse(
      "gpu01: name, compute_cap, driver_version\ngpu01: Tesla T4, 7.5, 535.1\n"
      "gpu02: name, driver_version\ngpu02: Tesla T4, 535.1\n");
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().headline(),
            "orchestrate: error: in.txt:3: a header unlike line 1's (name, compute_cap, driver_version): one input "
            "holds the output of one query; give each query's output as a file of its own");
  // --format=csv,noheader lines, then a header of the same columns: read.
  EXPECT_TRUE(
      parse("gpu01: Tesla T4, 7.5, 535.1\ngpu02: name, compute_cap, driver_version\ngpu02: Tesla T4, 7.5, "
            "535.1\n"));
}

TEST(InventoryClusterOutput, WhatANodePrintedInsteadIsItsProblem) {
  const auto inv = parse(data("pdsh-broken-nodes.txt"));
  ASSERT_TRUE(inv) << inv.error().render();
  EXPECT_EQ(described(*inv), k_three_h200s);
  ASSERT_EQ(inv->problems.size(), 2u);
  EXPECT_EQ(inv->problems[0].node, "gpu-old01");
  EXPECT_EQ(inv->problems[0].message,
            "printed 'Field \"compute_cap\" is not a valid field to query.', no line of nvidia-smi "
            "--query-gpu=name,compute_cap,driver_version --format=csv (its driver lacks the field: give `nvidia-smi "
            "--query-gpu=name,driver_version --format=csv` of that node as a file of its own): not placed (and 1 "
            "more line)");
  EXPECT_EQ(inv->problems[1].node, "gpu-down01");
  EXPECT_EQ(inv->problems[1].message, "pdsh says: sh exited with exit code 255: not placed");
  // They reach the stanza's comments.
  const std::string yaml = render_tiers_yaml(propose_tiers(*inv).value());
  EXPECT_NE(yaml.find("#   gpu-down01 (in.txt): pdsh says: sh exited with exit code 255: not placed\n"),
            std::string::npos)
      << yaml;
  // Only such lines: no GPU, and the error says what the first node printed.
  const auto none = parse("gpu-down01: ssh: connect to host gpu-down01 port 22: Connection refused\n");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message,
            "no GPU in this nvidia-smi CSV (gpu-down01: printed 'ssh: connect to host gpu-down01 port 22: Connection "
            "refused', no line of nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv: not placed)");
}

TEST(InventoryClusterOutput, BrokenHostListHeadersAreErrorsWithTheirLine) {
  const auto said = [](const std::string& text) {
    const auto inv = parse(text);
    return inv ? std::string("(read)") : inv.error().headline();
  };
  EXPECT_EQ(said("----------------\ngpu[3-1]\n----------------\nTesla T4, 7.5, 535.1\n"),
            "orchestrate: error: in.txt:2: host list 'gpu[3-1]': a range 3-1 that runs backwards");
  EXPECT_EQ(said("---------------\ngpu[1-3] (4)\n---------------\nTesla T4, 7.5, 535.1\n"),
            "orchestrate: error: in.txt:2: host list 'gpu[1-3]' names 3 nodes, not the 4 its count says");
  EXPECT_EQ(said("----------------\ngpu01\nTesla T4, 7.5, 535.1\n"),
            "orchestrate: error: in.txt:3: a rule of dashes expected after the host list (dshbak, clush -b)");
  EXPECT_EQ(said("----------------\ngpu01\n"),
            "orchestrate: error: in.txt:2: the input ends inside a host list's header (a rule of dashes, the hosts, a "
            "rule): dshbak or clush -b output cut short");
  // A YAML document start is still YAML.
  EXPECT_NE(said("---\ntiers: {}\n").find("this is YAML"), std::string::npos);
}

TEST(InventoryClusterOutput, AHostListSharesItsLinesWithinTheMemoryBound) {
  const std::string text = "----------------\nn[000001-100000]\n----------------\nNVIDIA H200, 9.0, 580.159.04\n";
  const auto all = parse(text);
  ASSERT_TRUE(all) << all.error().render();
  EXPECT_EQ(all->nodes.size(), 100'000u);
  EXPECT_EQ(all->nodes[99'999].name, "n100000");
  const auto over = parse(text, Limits{.node_bytes = all->footprint() / 2});
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("the nodes read take more than"), std::string::npos) << over.error().message;
  EXPECT_FALSE(parse("----------------\nn[1-131073]\n----------------\nNVIDIA H200, 9.0, 580.159.04\n"));
  // The same list again and again adds no node, but each time work: bounded
  // for all lists of an input together.
  std::string again;
  for (int i = 0; i < 2; ++i) again += text;
  EXPECT_TRUE(parse(again));
  const auto many = parse(again + text);
  ASSERT_FALSE(many);
  EXPECT_EQ(many.error().headline(),
            "orchestrate: error: in.txt:10: the host lists of this input name more than 262144 nodes in all; give "
            "tiers import the cluster a part at a time");
}

TEST(InventoryHostlist, NamesExpandAsPdshAndClusterShellWriteThem) {
  const auto names = [](std::string_view text) {
    std::vector<std::string> out;
    const auto list = detail::Hostlist::parse(text);
    if (!list) return std::vector<std::string>{"error: " + list.error()};
    list->for_each([&](const std::string& n) {
      out.push_back(n);
      return true;
    });
    EXPECT_EQ(out.size(), list->size()) << text;
    return out;
  };
  EXPECT_EQ(names("gpu[01-03,10]"), (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu10"}));
  EXPECT_EQ(names("login1,gpu[8-10]"), (std::vector<std::string>{"login1", "gpu8", "gpu9", "gpu10"}));
  EXPECT_EQ(names("r[1-2]n[08-09]-ib"), (std::vector<std::string>{"r1n08-ib", "r1n09-ib", "r2n08-ib", "r2n09-ib"}));
  EXPECT_EQ(names("gpu[0]"), (std::vector<std::string>{"gpu0"}));
  EXPECT_EQ(names("gpu[1-"), (std::vector<std::string>{"error: a '[' without its ']'"}));
  EXPECT_EQ(names("gpu[]"), (std::vector<std::string>{"error: empty brackets"}));
  EXPECT_EQ(names("gpu[a-b]"), (std::vector<std::string>{"error: 'a' is no number"}));
  EXPECT_EQ(names("gpu[1-2],,x"), (std::vector<std::string>{"error: an empty name"}));
  EXPECT_EQ(names("n[1-100000],m[1-100000]"),
            (std::vector<std::string>{"error: it names more than 131072 nodes; give tiers import the cluster a part "
                                      "at a time"}));
  EXPECT_EQ(names("n[0-9999999999]"),
            (std::vector<std::string>{"error: '9999999999' is no number of at most 9 digits"}));
}

// H100 nodes on two driver branches, and one whose driver no source gives.
constexpr std::string_view k_two_branches =
    "h1: name, compute_cap, driver_version\nh1: NVIDIA H100 80GB HBM3, 9.0, 535.104.05\n"
    "h2: name, compute_cap, driver_version\nh2: NVIDIA H100 80GB HBM3, 9.0, 550.90.07\n"
    "h3: name, compute_cap, driver_version\nh3: NVIDIA H100 80GB HBM3, 9.0, 550.54.15\n";

TEST(InventoryGroupBy, OneTierPerCcSetSaysWhenItsNodesRunSeveralBranches) {
  Inventory inv = parse(std::string(k_two_branches)).value();
  const Proposal p = propose_tiers(inv).value();
  ASSERT_EQ(p.tiers.size(), 1u);
  EXPECT_EQ(p.tiers[0].name, "h100");
  EXPECT_EQ(p.tiers[0].driver, util::Version::parse("535.104.05").value());
  EXPECT_EQ(p.tiers[0].notes,
            (std::vector<std::string>{
                "its nodes run 2 driver branches (535, 550): --group-by cc+driver makes a tier of each"}));
}

TEST(InventoryGroupBy, CcAndDriverMakesATierPerBranchWithItsDriver) {
  Inventory inv = parse(std::string(k_two_branches)).value();
  inv.merge(parse_scontrol_nodes("NodeName=h4 Gres=gpu:h100:8 Partitions=gpu\n", "nodes.txt").value());
  EXPECT_EQ(parse_group_by("cc+driver"), GroupBy::cc_driver);
  EXPECT_FALSE(parse_group_by("driver"));
  const Proposal p = propose_tiers(inv, GroupBy::cc_driver).value();
  EXPECT_EQ(render_tiers_yaml(p), R"(# orchestrate tiers import: 4 GPU nodes, 3 tiers
tiers:
  # h100: 1 node (h4); h100 x8
  h100:
    gpus: ["H100"]
    slurm: {partition: "gpu", gres: "gpu:h100:1"}
    # no source gives these nodes' driver (Slurm does not record it): add `driver:` by hand
  # h100-r535: 1 node (h1); NVIDIA H100 80GB HBM3 x1; driver 535.104.05
  h100-r535:
    gpus: ["H100"]
    driver: "535.104.05"
  # h100-r550: 2 nodes (h2, h3); NVIDIA H100 80GB HBM3 x1; drivers 550.54.15, 550.90.07
  h100-r550:
    gpus: ["H100"]
    driver: "550.54.15"
)");
  EXPECT_EQ(p.tiers[1].branch, 535);
  EXPECT_FALSE(p.tiers[0].branch);
}

}  // namespace
}  // namespace orc::inventory
