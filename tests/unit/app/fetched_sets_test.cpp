// `inspect DIR` over a directory of fetched sets (issue 29, point 8): each
// set's files against its own tier, the configuration's when it declares
// it, else the GPUs its signed manifest records; every file against every
// tier with --all-tiers, and for a set whose record does not verify. The
// files are nvcc's (CUDA 13.0); the records are what fetch writes
// (cache/set_record.hpp), signed with a key of the keys dir.
#include "orchestrator/app/inspect/fetched_sets.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "orchestrator/app/inspect/coverage.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/cache/set_record.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/process.hpp"
#include "tests/unit/cache/test_support.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* k_nvcc = "/usr/local/cuda/bin/nvcc";

class FetchedSets : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_root = new fs::path(fs::temp_directory_path() / ("orc-fetched-sets-" + std::to_string(::getpid())));
    fs::remove_all(*s_root);
    fs::create_directories(*s_root / "bin");
    if (::access(k_nvcc, X_OK) != 0) return;
    std::ofstream(*s_root / "k.cu") << "__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n"
                                    << "int main() { k<<<1, 32>>>(nullptr); return 0; }\n";
    // sm_80 SASS; sm_90 SASS with compute_90 PTX; a program with sm_90 SASS
    // that needs the CUDA 13 runtime (libcudart.so.13) from the driver.
    for (const auto& [out, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"k80.fatbin", {"-fatbin", "-gencode", "arch=compute_80,code=sm_80"}},
             {"k90.fatbin", {"-fatbin", "-gencode", "arch=compute_90,code=[sm_90,compute_90]"}},
             {"app90", {"-cudart", "shared", "-gencode", "arch=compute_90,code=sm_90"}}}) {
      std::vector<std::string> argv = {k_nvcc};
      argv.insert(argv.end(), args.begin(), args.end());
      for (const auto& a : {std::string("-o"), (*s_root / "bin" / out).string(), (*s_root / "k.cu").string()})
        argv.push_back(a);
      const auto built = util::run_process({.argv = argv, .merge_stderr = true});
      if (!built || !built->ok()) {
        s_failed = built ? built->out : built.error().message;
        return;
      }
    }
    s_built = true;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*s_root, ec);
    delete s_root;
  }

  void SetUp() override {
    if (::access(k_nvcc, X_OK) != 0) GTEST_SKIP() << "no CUDA 13.0 toolkit (" << k_nvcc << ")";
    ASSERT_TRUE(s_built) << s_failed;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = *s_root / info->name();
    fs::create_directories(m_dir / "fleet");
    ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir / "keys").c_str(), 1);
    ASSERT_TRUE(cache::generate_key(m_dir / "keys"));
    m_key = cache::load_signing_key(m_dir / "keys").value();
  }
  void TearDown() override { ::unsetenv("ORCHESTRATE_KEYS_DIR"); }

  // fleet/DIR as fetch leaves it: FILE (from bin/) and the record of a set
  // of RECIPE for TIER built for `gpus` ("H100=9.0"), signed by `key`.
  void add_set(const std::string& dir, const std::string& file, const std::string& tier,
               std::vector<cache::BuiltFor::Gpu> gpus, const cache::SigningKey* key = nullptr) {
    fs::create_directories(m_dir / "fleet" / dir);
    fs::copy_file(*s_root / "bin" / file, m_dir / "fleet" / dir / file);
    cache::Manifest m = cache::testing::sample_manifest("saxpy", tier);
    const std::string bytes = util::read_file(*s_root / "bin" / file).value();
    m.files = {{.path = file,
                .sha256 = digest::sha256(std::string_view(bytes)).hex(),
                .size = bytes.size(),
                .requested_sass = {},
                .requested_ptx = {},
                .embedded_sass = {},
                .embedded_ptx = {}}};
    m.smoke.clear();
    m.built_for = cache::BuiltFor{.gpus = std::move(gpus), .ptx = "highest"};
    const std::string manifest = cache::canonical_json(m);
    const auto signature = cache::signature_json(cache::sign_manifest(key ? *key : *m_key, manifest));
    ASSERT_TRUE(cache::write_set_record(m_dir / "fleet" / dir, manifest, signature));
  }
  fs::path config(const std::string& yaml) {
    std::ofstream(m_dir / "orchestrate.yaml") << yaml << "recipes: []\n";
    return m_dir / "orchestrate.yaml";
  }
  ImageReport cover(const fs::path& cfg, SetTiers tiers = SetTiers::own) {
    const InspectRequest request{.config = cfg, .set_tiers = tiers};
    return cover_image(request, ImageSource{.kind = ImageSourceKind::directory,
                                            .given = (m_dir / "fleet").string(),
                                            .directory = m_dir / "fleet"});
  }

  static inline fs::path* s_root = nullptr;
  static inline bool s_built = false;
  static inline std::string s_failed;
  fs::path m_dir;
  std::optional<cache::SigningKey> m_key;
};

constexpr const char* k_two_tiers = R"(tiers:
  tier-ampere:
    gpus: ["A100"]
    driver: "580.65.06"
  tier-hopper:
    gpus: ["H100"]
    driver: "580.65.06"
)";

// Text with each run of spaces and line breaks one space: the tables wrap long cells.
std::string words(const std::string& text) {
  std::string out;
  for (char ch : text)
    if (ch != ' ' && ch != '\n')
      out += ch;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  return out;
}

std::vector<std::string> verdicts(const CoverageTier& t) {
  std::vector<std::string> out;
  for (const auto& r : t.rows)
    for (const auto& c : r.cells) out.push_back(r.path + " " + c.label());
  return out;
}

TEST_F(FetchedSets, AHealthyFleetIsJudgedPerSetAndExitsZeroWhereEveryTierFailsIt) {
  add_set("amp", "k80.fatbin", "tier-ampere", {{.name = "A100", .cc = "8.0"}});
  add_set("hop", "k90.fatbin", "tier-hopper", {{.name = "H100", .cc = "9.0"}});
  const fs::path cfg = config(k_two_tiers);

  const ImageReport own = cover(cfg);
  ASSERT_EQ(own.sets.size(), 2u);
  EXPECT_EQ(own.sets[0].dir, "amp");
  EXPECT_EQ(own.sets[0].from, TierFrom::configuration);
  EXPECT_EQ(own.sets[1].judged->name, "tier-hopper");
  ASSERT_EQ(own.tiers.size(), 2u);
  EXPECT_EQ(own.tiers[0].set, 0u);
  EXPECT_EQ(verdicts(own.tiers[0]), std::vector<std::string>{"/amp/k80.fatbin native"});
  EXPECT_EQ(own.tiers[1].set, 1u);
  EXPECT_EQ(verdicts(own.tiers[1]), std::vector<std::string>{"/hop/k90.fatbin native"});
  EXPECT_EQ(own.tiers[1].driver, util::Version::parse("580.65.06"));
  EXPECT_EQ(own.exit_code, util::ExitCode::ok);

  const std::string text = words(cli::coverage_text(own, false));
  EXPECT_NE(text.find("2 fetched sets, each judged against its own tier (--all-tiers: every file against every tier):"),
            std::string::npos)
      << text;
  // The configuration's path may wrap after a '/': the JSON below has it whole.
  EXPECT_NE(text.find("tier-ampere, from /"), std::string::npos) << text;
  EXPECT_NE(text.find(" amp: tier-ampere (driver 580.65.06): 1 native, 0 jit, 0 none "), std::string::npos) << text;
  const json doc = json::parse(cli::coverage_json(own));
  EXPECT_EQ(doc["judged"], "per-set");
  EXPECT_EQ(doc["sets"][0]["judged_against"], "tier-ampere");
  EXPECT_EQ(doc["sets"][0]["tier_from"], "configuration");
  EXPECT_EQ(doc["sets"][0]["configuration"], cfg.string());
  EXPECT_EQ(doc["sets"][0]["signature"]["status"], "verified");
  EXPECT_EQ(doc["sets"][1]["result"], "runs");
  EXPECT_EQ(doc["tiers"][1]["set"], "hop");

  // --all-tiers: what inspect did before, every file against every tier.
  const ImageReport every = cover(cfg, SetTiers::every);
  EXPECT_TRUE(every.sets.empty());
  ASSERT_EQ(every.tiers.size(), 2u);
  EXPECT_EQ(verdicts(every.tiers[0]), (std::vector<std::string>{"/amp/k80.fatbin native", "/hop/k90.fatbin none"}));
  EXPECT_EQ(every.exit_code, util::ExitCode::check_failed);
  EXPECT_EQ(json::parse(cli::coverage_json(every))["judged"], "every-tier");
}

TEST_F(FetchedSets, WithoutTheConfigurationTheTierIsTheOneItsSignedManifestRecords) {
  add_set("hop", "k80.fatbin", "tier-hopper", {{.name = "H100", .cc = "9.0"}});
  const ImageReport r = cover(m_dir / "absent.yaml");
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_EQ(r.sets[0].from, TierFrom::manifest);
  ASSERT_EQ(r.tiers.size(), 1u);
  EXPECT_FALSE(r.tiers[0].driver);
  EXPECT_EQ(verdicts(r.tiers[0]), std::vector<std::string>{"/hop/k80.fatbin none"});
  EXPECT_EQ(r.tiers[0].rows[0].cells[0].cause, Cause::missing_code);
  EXPECT_EQ(r.exit_code, util::ExitCode::check_failed);
  const std::string text = words(cli::coverage_text(r, false));
  EXPECT_NE(text.find("does not run: 1 none"), std::string::npos) << text;
  EXPECT_NE(text.find("tier-hopper, from its signed manifest (the GPUs it was built for; no configuration here)"),
            std::string::npos)
      << text;
  EXPECT_EQ(json::parse(cli::coverage_json(r))["sets"][0]["tier_from"], "manifest");
}

TEST_F(FetchedSets, AConfigurationTierWithGpusTheSetWasNotBuiltForSaysWhich) {
  add_set("hop", "k90.fatbin", "tier-hopper", {{.name = "H100", .cc = "9.0"}});
  const ImageReport r = cover(config("tiers:\n  tier-hopper:\n    gpus: [\"H100\", \"A100\"]\n"));
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_EQ(r.sets[0].added_since, std::vector<std::string>{"A100 (8.0)"});
  EXPECT_EQ(verdicts(r.tiers[0]), (std::vector<std::string>{"/hop/k90.fatbin native", "/hop/k90.fatbin none"}));
  EXPECT_EQ(r.exit_code, util::ExitCode::check_failed);
  EXPECT_NE(words(cli::coverage_text(r, false))
                .find("tier-hopper in the configuration has GPUs the set was not built for: "
                      "A100 (8.0)"),
            std::string::npos);
}

TEST_F(FetchedSets, ARecordThatDoesNotVerifyIsJudgedAgainstEveryTier) {
  add_set("amp", "k80.fatbin", "tier-ampere", {{.name = "A100", .cc = "8.0"}});
  const cache::SigningKey stranger = cache::SigningKey::generate().value();
  add_set("odd", "k80.fatbin", "tier-ampere", {{.name = "A100", .cc = "8.0"}}, &stranger);
  const ImageReport r = cover(config(k_two_tiers));
  ASSERT_EQ(r.sets.size(), 2u);
  EXPECT_EQ(r.sets[1].from, TierFrom::none);
  EXPECT_NE(r.sets[1].why.find("its manifest's signature does not verify here"), std::string::npos) << r.sets[1].why;
  // amp against its tier; odd's file against both tiers, outside the sets.
  ASSERT_EQ(r.tiers.size(), 3u);
  EXPECT_EQ(r.tiers[0].set, 0u);
  EXPECT_FALSE(r.tiers[1].set);
  EXPECT_EQ(verdicts(r.tiers[1]), std::vector<std::string>{"/odd/k80.fatbin native"});
  EXPECT_EQ(verdicts(r.tiers[2]), std::vector<std::string>{"/odd/k80.fatbin none"});
  EXPECT_EQ(r.exit_code, util::ExitCode::check_failed);
  EXPECT_NE(words(cli::coverage_text(r, false)).find(" outside the fetched sets: tier-hopper (driver 580.65.06)"),
            std::string::npos);
}

TEST_F(FetchedSets, AFleetWithoutAnyTierToJudgeASetByExitsOne) {
  // A record without built_for, and no configuration: nothing says the GPUs.
  add_set("old", "k80.fatbin", "tier-ampere", {{.name = "A100", .cc = "8.0"}});
  fs::path record = m_dir / "fleet/old" / cache::k_set_record_dir;
  auto m = cache::parse_manifest(util::read_file(record / "manifest.json").value()).value();
  m.built_for.reset();
  const std::string bytes = cache::canonical_json(m);
  fs::remove_all(m_dir / "fleet/old/.orchestrate");
  ASSERT_TRUE(
      cache::write_set_record(m_dir / "fleet/old", bytes, cache::signature_json(cache::sign_manifest(*m_key, bytes))));
  const ImageReport r = cover(m_dir / "absent.yaml");
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_TRUE(r.tiers.empty());
  EXPECT_EQ(r.exit_code, util::ExitCode::check_failed);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.back().find("old: not judged: its manifest does not record the tier's GPUs"), std::string::npos)
      << r.warnings.back();
}

TEST_F(FetchedSets, TheDriverAndMissingCodeAreToldApartInEveryForm) {
  add_set("hop", "app90", "tier-hopper", {{.name = "H100", .cc = "9.0"}, {.name = "A100", .cc = "8.0"}});
  // R550 runs an H100, but not the CUDA 13 runtime app90 needs.
  const ImageReport r =
      cover(config("tiers:\n  tier-hopper:\n    gpus: [\"H100\", \"A100\"]\n    driver: \"550.54.15\"\n"));
  ASSERT_EQ(r.tiers.size(), 1u);
  ASSERT_EQ(r.tiers[0].rows.size(), 1u);
  const auto& cells = r.tiers[0].rows[0].cells;
  EXPECT_EQ(cells[0].label(), "none");
  EXPECT_EQ(cells[0].cause, Cause::driver);
  EXPECT_NE(cells[0].why.find("needs driver >= 580"), std::string::npos) << cells[0].why;
  // The A100 gets none from the same driver, but a newer one would not help: it lacks sm_80.
  EXPECT_EQ(cells[1].label(), "none");
  EXPECT_EQ(cells[1].cause, Cause::missing_code);

  const std::string text = cli::coverage_text(r, false);
  EXPECT_NE(text.find("none (driver)"), std::string::npos) << text;
  const json doc = json::parse(cli::coverage_json(r));
  EXPECT_EQ(doc["tiers"][0]["rows"][0]["cells"][0]["cause"], "driver");
  const std::string html = cli::coverage_html(r);
  // The whole reason in the cell, behind a click (<details>), and a legend that tells the causes apart.
  std::string why;
  for (char ch : cells[0].why)
    why += ch == '>' ? std::string("&gt;") : ch == '<' ? std::string("&lt;") : std::string(1, ch);
  EXPECT_NE(html.find("data-verdict=\"none\" data-cause=\"driver\""), std::string::npos) << html;
  EXPECT_NE(html.find("<summary>none<small>driver too old</small></summary><div class=\"why\">" + why + "</div>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("data-cause=\"driver\">none (driver): the code is there, but the driver is too old"),
            std::string::npos);
  EXPECT_NE(html.find("data-cause=\"missing-code\">none: no kernel image for this GPU (error 209)"), std::string::npos);
  EXPECT_NE(cli::coverage_markdown(r).find("🟠 none (driver)"), std::string::npos);

  // The same file with no driver named: the code runs on the H100 and lacks sm_80 for the A100.
  const ImageReport code = cover(config("tiers:\n  tier-hopper:\n    gpus: [\"H100\", \"A100\"]\n"));
  EXPECT_EQ(code.tiers[0].rows[0].cells[0].cause, Cause::runs);
  EXPECT_EQ(code.tiers[0].rows[0].cells[1].cause, Cause::missing_code);
}

}  // namespace
}  // namespace orc::app
