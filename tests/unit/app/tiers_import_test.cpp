// `orchestrate tiers import` on inventories whose names are hostile (issue
// 28, point 2): node names with newlines, ESC sequences and bytes that are
// not UTF-8, products and labels with quotes and YAML syntax, a partition
// and features that are no sbatch words. The stanza it prints parses back,
// with the project's own configuration parser, to exactly the tiers it
// proposed, no more; the JSON form parses and says the same. And the
// errors an input gets from the files' side (a directory, a missing file).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/app/tiers/tiers_import.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

class TiersImport : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-tiers-" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(m_dir / name, std::ios::binary) << text;
    return (m_dir / name).string();
  }

  fs::path m_dir;
};

// Slurm records, nvidia-smi CSV and GFD labels, with names a cluster should
// not have but an inventory file can hold; `write` makes each file.
std::vector<std::string> hostile_inventory(auto write) {
  const std::string scontrol =
      "NodeName=gpu-a\x1b[2J AvailableFeatures=sm_80,ib,\"q\\ Gres=gpu:a100:4 Partitions=gpu,a},{x:1\n"
      "NodeName=gpu-b\xff AvailableFeatures=sm_80,ib,\"q\\ Gres=gpu:a100:4 Partitions=gpu,a},{x:1\n"
      "NodeName=gpu-h AvailableFeatures=sm_90 Gres=gpu:h100:8 Partitions=gpu\n";
  const std::string csv =
      "node, name, compute_cap, driver_version\n"
      "gpu-a\x1b[2J, NVIDIA A100-SXM4-80GB, 8.0, 535.104.05\n"
      "gpu-b\xff, NVIDIA A100-SXM4-80GB, 8.0, 550.54.15\n";
  const std::string json = R"({"kind": "List", "items": [
    {"kind": "Node", "metadata": {"name": "k8s-1\n  evil:\n    gpus: [B200]\n# ", "labels": {
      "nvidia.com/gpu.product": "Lab \"X\" \\ card: {a: b}\u001b[31m\u2028", "nvidia.com/gpu.compute.major": "8",
      "nvidia.com/gpu.compute.minor": "6", "nvidia.com/cuda.driver-version.full": "560.35.03"}}},
    {"kind": "Node", "metadata": {"name": "k8s-2\r\ntiers:", "labels": {
      "nvidia.com/gpu.product": "Mystery\u0085Card"}}}]})";
  return {write("nodes.txt", scontrol), write("smi.csv", csv), write("nodes.json", json)};
}

TEST_F(TiersImport, HostileNamesParseBackToExactlyTheTiersProposed) {
  const auto files = hostile_inventory([&](const std::string& n, const std::string& s) { return write(n, s); });
  const inventory::Proposal proposal = tiers_import(TiersImportRequest{.files = files});
  ASSERT_EQ(proposal.tiers.size(), 3u);
  const std::string yaml = inventory::render_tiers_yaml(proposal);
  // Nothing raw reaches the terminal: no ESC, CR, C1 or byte outside UTF-8.
  EXPECT_EQ(yaml.find('\x1b'), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find('\r'), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("\xff"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("\xc2\x85"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("gpu-a\\x1b[2J"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("gpu-b\\xff"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("# slurm: partitions 'a}', '{x:1' are not words sbatch takes"), std::string::npos) << yaml;

  const auto config = recipe::parse_config(yaml, m_dir / "orchestrate.yaml");
  ASSERT_TRUE(config) << yaml << "\n" << config.error().front().render();
  ASSERT_EQ(config->tiers.size(), proposal.tiers.size()) << yaml;
  for (std::size_t i = 0; i < proposal.tiers.size(); ++i) {
    const inventory::ProposedTier& want = proposal.tiers[i];
    const recipe::Tier& got = config->tiers[i];
    SCOPED_TRACE(want.name);
    EXPECT_EQ(got.name, want.name);
    ASSERT_EQ(got.gpus.size(), want.gpus.size());
    for (std::size_t g = 0; g < want.gpus.size(); ++g) {
      EXPECT_EQ(got.gpus[g].name, want.gpus[g].name);
      EXPECT_EQ(got.gpus[g].declared, want.gpus[g].declared.has_value());
      if (want.gpus[g].declared) EXPECT_EQ(got.gpus[g].cc, *want.gpus[g].declared);
    }
    EXPECT_EQ(got.driver, want.driver);
    ASSERT_EQ(got.slurm.has_value(), !want.partition.empty() || !want.constraint.empty() || !want.gres.empty());
    if (got.slurm) {
      EXPECT_EQ(got.slurm->partition, want.partition);
      EXPECT_EQ(got.slurm->constraint, want.constraint);
      EXPECT_EQ(got.slurm->gres, want.gres);
    }
    ASSERT_EQ(got.kubernetes.has_value(), !want.selector.empty());
    if (got.kubernetes) EXPECT_EQ(got.kubernetes->selector, want.selector);
  }
  // The declared GPU keeps its name, control characters and all.
  const inventory::ProposedTier& lab = proposal.tiers[1];
  ASSERT_EQ(lab.name, "sm86");
  EXPECT_EQ(config->tiers[1].gpus[0].name, "Lab \"X\" \\ card: {a: b}\x1b[31m\xe2\x80\xa8");
  // What sbatch takes is proposed: the partition and features that are words.
  EXPECT_EQ(proposal.tiers[0].partition, "gpu");
  EXPECT_EQ(proposal.tiers[0].constraint, "sm_80&ib");
}

TEST_F(TiersImport, TheJsonFormSaysTheSameAndParses) {
  const auto files = hostile_inventory([&](const std::string& n, const std::string& s) { return write(n, s); });
  const inventory::Proposal proposal = tiers_import(TiersImportRequest{.files = files});
  const nlohmann::json json = nlohmann::json::parse(tiers_json(proposal));  // no type_error 316
  ASSERT_EQ(json["tiers"].size(), proposal.tiers.size());
  EXPECT_EQ(json["tiers"][0]["nodes"][1], "gpu-b\\xff");
  EXPECT_EQ(json["tiers"][1]["gpus"][0]["name"], "Lab \"X\" \\ card: {a: b}\x1b[31m\xe2\x80\xa8");
  EXPECT_EQ(json["problems"].size(), 1u);
  EXPECT_EQ(json["problems"][0]["node"], "k8s-2\r\ntiers:");
}

TEST_F(TiersImport, FilesThatCannotBeReadAreErrorsNamingThem) {
  const auto refused = [&](std::vector<std::string> files) -> std::string {
    try {
      tiers_import(TiersImportRequest{.files = std::move(files)});
      return "(read)";
    } catch (const util::Failure& f) {
      EXPECT_EQ(f.code(), util::ExitCode::bad_input);
      return f.diagnostics().front().headline();
    }
  };
  EXPECT_EQ(refused({m_dir.string()}),
            "orchestrate: error: " + m_dir.string() + ": is a directory; give tiers import the inventory files in it");
  EXPECT_EQ(refused({(m_dir / "none.csv").string()}),
            "orchestrate: error: " + (m_dir / "none.csv").string() + ": cannot read it: No such file or directory");
  EXPECT_EQ(refused({"-"}), "orchestrate: error: '-' names standard input, which is not given");
  const std::string list = write("list.json", "[]");
  EXPECT_EQ(refused({list}), "orchestrate: error: " + list +
                                 ":1: this is a JSON array; tiers import reads nvidia-smi "
                                 "--query-gpu=name,compute_cap,driver_version --format=csv, `scontrol show node -o` "
                                 "or `kubectl get nodes -o json` output");
  std::istringstream in("NodeName=a Gres=gpu:h100:1\nnot a record\n");
  try {
    tiers_import(TiersImportRequest{.files = {"-"}, .stdin_stream = &in});
    FAIL() << "read";
  } catch (const util::Failure& f) {
    EXPECT_EQ(f.diagnostics().front().headline(),
              "orchestrate: error: standard input:2: expected `scontrol show node -o` output (one NodeName=... line "
              "per node)");
  }
}

}  // namespace
}  // namespace orc::app
