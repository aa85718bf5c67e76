// A directory of fetched sets judged per set (issue 29, point 8). Two sets
// of nvcc-built fatbins, signed and stored by bench_fetch_seed, are pushed
// to Debian's real docker-registry (started here, stopped by PID) and
// fetched by a node without a configuration into fleet/, as a site lays out
// its fleet: `inspect fleet` judges each against its own tier (exit 0) where
// every file against every tier fails (exit 1, --all-tiers); it says per
// set which tier and from where (the signed manifest, else the site's
// configuration); a stray file and a record changed after signing are
// judged against every tier.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/process.hpp"
#include "tests/integration/registry_process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string k_nvcc = env_or("NVCC", "/usr/local/cuda/bin/nvcc");

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class FleetReport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_dir = new TempDir("orc-fleet-it");
    s_registry = new RegistryProcess(root() / "registry");
    std::ofstream(root() / "k.cu") << "__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n";
    s_nvcc = run_process({k_nvcc, "-fatbin", "-gencode", "arch=compute_80,code=sm_80", "-o",
                          (root() / "k80.fatbin").string(), (root() / "k.cu").string()});
    if (s_nvcc.exit_code == 0)
      s_nvcc = run_process({k_nvcc, "-fatbin", "-gencode", "arch=compute_90,code=[sm_90,compute_90]", "-o",
                            (root() / "k90.fatbin").string(), (root() / "k.cu").string()});
    std::ofstream(root() / "site.yaml") << R"(tiers:
  tier-ampere:
    gpus: ["A100"]
    driver: "580.65.06"
  tier-hopper:
    gpus: ["H100"]
    driver: "580.65.06"
recipes: []
)";
  }
  static void TearDownTestSuite() {
    delete s_registry;
    delete s_dir;
  }
  void SetUp() override {
    if (!s_registry->error().empty()) GTEST_SKIP() << s_registry->error();
    if (s_nvcc.exit_code != 0) GTEST_SKIP() << "nvcc (" << k_nvcc << ") failed: " << s_nvcc.output;
  }

  static fs::path root() { return s_dir->path(); }
  // orchestrate with a store, a keys dir and the remote; no configuration
  // unless `args` name one (-f).
  static std::vector<std::string> argv(const std::string& machine, const std::vector<std::string>& args) {
    std::vector<std::string> out = {"env",
                                    "-u",
                                    "ORCHESTRATE_CONFIG",
                                    "ORCHESTRATE_CACHE_DIR=" + (root() / machine / "store").string(),
                                    "ORCHESTRATE_KEYS_DIR=" + (root() / machine / "keys").string(),
                                    "ORCHESTRATE_REMOTE=" + s_registry->url("team/artifacts"),
                                    "COLUMNS=100",
                                    ORC_BINARY};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }
  static ProcessResult orc(const std::string& machine, const std::vector<std::string>& args) {
    return run_process(argv(machine, args), root());
  }
  // stdout alone (the JSON), with the exit code expected.
  static json orc_json(const std::string& machine, const std::vector<std::string>& args, int expected) {
    std::vector<std::string> sh = {"sh", "-c", "exec \"$@\" 2>/dev/null", "sh"};
    for (auto& a : argv(machine, args)) sh.push_back(std::move(a));
    const auto result = run_process(sh, root());
    EXPECT_EQ(result.exit_code, expected) << result.output;
    return json::parse(result.output, nullptr, false);
  }

  static inline TempDir* s_dir = nullptr;
  static inline RegistryProcess* s_registry = nullptr;
  static inline ProcessResult s_nvcc;
};

std::vector<std::string> cells(const json& tier) {
  std::vector<std::string> out;
  for (const auto& row : tier["rows"])
    for (const auto& c : row["cells"])
      out.push_back(row["path"].get<std::string>() + " " + c["verdict"].get<std::string>());
  return out;
}

TEST_F(FleetReport, EachFetchedSetIsJudgedAgainstItsOwnTier) {
  // The build machine: two sets, signed, recording the GPUs they were built for; pushed.
  ASSERT_EQ(orc("build", {"key", "generate"}).exit_code, 0);
  for (const auto& [tier, file, built_for] : {std::tuple{"tier-ampere", "k80.fatbin", "highest:A100=8.0"},
                                              std::tuple{"tier-hopper", "k90.fatbin", "highest:H100=9.0"}}) {
    const auto seeded =
        run_process({ORC_SEED, std::string("--built-for=") + built_for, (root() / "build/store").string(),
                     (root() / "build/keys").string(), "saxpy", tier, (root() / file).string()});
    ASSERT_EQ(seeded.exit_code, 0) << seeded.output;
    const auto pushed = orc("build", {"push", "saxpy", "--tier", tier});
    ASSERT_EQ(pushed.exit_code, 0) << pushed.output;
  }
  // The node: no configuration, the build machine's key trusted; a fleet of fetched sets.
  ASSERT_EQ(orc("node", {"key", "trust", (root() / "build/keys/signing.pub.pem").string()}).exit_code, 0);
  for (const std::string tier : {"tier-ampere", "tier-hopper"}) {
    const auto fetched = orc("node", {"fetch", "saxpy", "--tier", tier, "-o", "fleet/saxpy-" + tier});
    ASSERT_EQ(fetched.exit_code, 0) << fetched.output;
  }
  // What fetch leaves beside the files: the signed manifest and its signature.
  EXPECT_NE(read(root() / "fleet/saxpy-tier-hopper/.orchestrate/set.v1/manifest.json").find("\"tier-hopper\""),
            std::string::npos);
  EXPECT_TRUE(fs::exists(root() / "fleet/saxpy-tier-hopper/.orchestrate/set.v1/signature.json"));

  // No configuration: each set against the GPUs its signed manifest records.
  json doc = orc_json("node", {"inspect", "fleet", "--json"}, 0);
  EXPECT_EQ(doc["judged"], "per-set");
  ASSERT_EQ(doc["sets"].size(), 2u);
  EXPECT_EQ(doc["sets"][0]["dir"], "saxpy-tier-ampere");
  EXPECT_EQ(doc["sets"][0]["tier_from"], "manifest");
  EXPECT_EQ(doc["sets"][0]["signature"]["status"], "verified");
  EXPECT_EQ(doc["sets"][1]["gpus"], json::array({"H100 (9.0)"}));
  ASSERT_EQ(doc["tiers"].size(), 2u);
  EXPECT_EQ(cells(doc["tiers"][0]), std::vector<std::string>{"/saxpy-tier-ampere/k80.fatbin native"});
  EXPECT_EQ(cells(doc["tiers"][1]), std::vector<std::string>{"/saxpy-tier-hopper/k90.fatbin native"});

  // With the site's configuration: its tiers (and drivers), said so.
  const std::string site = (root() / "site.yaml").string();
  doc = orc_json("node", {"inspect", "fleet", "-f", site, "--json"}, 0);
  EXPECT_EQ(doc["sets"][1]["tier_from"], "configuration");
  EXPECT_EQ(doc["sets"][1]["configuration"], site);
  EXPECT_EQ(doc["tiers"][1]["driver"], "580.65.06");
  const auto text = orc("node", {"inspect", "fleet", "-f", site});
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("2 fetched sets, each judged against its own tier"), std::string::npos) << text.output;
  // The table wraps the long cell: read it as words.
  std::string words;
  for (char ch : text.output)
    if (ch != ' ' && ch != '\n')
      words += ch;
    else if (!words.empty() && words.back() != ' ')
      words += ' ';
  EXPECT_NE(words.find("saxpy-tier-hopper saxpy sha256:"), std::string::npos) << text.output;
  EXPECT_NE(words.find("runs tier-hopper, from " + site), std::string::npos) << text.output;

  // Every file against every tier, as before: the Ampere set has no code for the H100.
  doc = orc_json("node", {"inspect", "fleet", "-f", site, "--all-tiers", "--json"}, 1);
  EXPECT_EQ(doc["judged"], "every-tier");
  EXPECT_EQ(cells(doc["tiers"][1]),
            (std::vector<std::string>{"/saxpy-tier-ampere/k80.fatbin none", "/saxpy-tier-hopper/k90.fatbin native"}));

  // The HTML page: a table per set, self-contained.
  const auto page = orc("node", {"inspect", "fleet", "-f", site, "--report", "fleet.html"});
  EXPECT_EQ(page.exit_code, 0) << page.output;
  const std::string html = read(root() / "fleet.html");
  EXPECT_NE(html.find("<table class=\"grid\" data-tier=\"tier-hopper\" data-set=\"saxpy-tier-hopper\">"),
            std::string::npos);
  for (const char* external : {"src=", "href=", "url(", "@import", "http://", "https://"})
    EXPECT_EQ(html.find(external), std::string::npos) << external;

  // A stray file beside the sets: against every tier, and exit 1 for its none.
  fs::copy_file(root() / "k80.fatbin", root() / "fleet/stray.fatbin");
  doc = orc_json("node", {"inspect", "fleet", "-f", site, "--json"}, 1);
  ASSERT_EQ(doc["tiers"].size(), 4u);
  EXPECT_TRUE(doc["tiers"][2]["set"].is_null());
  EXPECT_EQ(cells(doc["tiers"][3]), std::vector<std::string>{"/stray.fatbin none"});
  fs::remove(root() / "fleet/stray.fatbin");

  // A record changed after it was signed chooses no tier: against every tier.
  const fs::path manifest = root() / "fleet/saxpy-tier-ampere/.orchestrate/set.v1/manifest.json";
  std::string changed = read(manifest);
  changed.replace(changed.rfind("\"tier-ampere\""), 13, "\"tier-hopper\"");
  std::ofstream(manifest, std::ios::binary | std::ios::trunc) << changed;
  doc = orc_json("node", {"inspect", "fleet", "-f", site, "--json"}, 1);
  EXPECT_TRUE(doc["sets"][0]["tier_from"].is_null());
  EXPECT_EQ(doc["sets"][0]["signature"]["status"], "digest mismatch");
  EXPECT_NE(doc["sets"][0]["why"].get<std::string>().find("signature does not verify here"), std::string::npos);
}

}  // namespace
}  // namespace orc::integration
