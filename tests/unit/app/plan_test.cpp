// The typed plan: rows of the compat tables, the arch set and the
// framework's typed variables, made from one parsed configuration; the host
// engine's fallback said in the plan; warnings once; JSON nulls.
#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/cli/render.hpp"
#include "tests/unit/fake_toolkit.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace orc::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_config = R"(toolkits: ["11.8", "12.4", "13.0"]
tiers:
  tier-new:
    gpus: ["A100", "H100"]
  tier-mixed:
    gpus: ["Tesla K80", "B200"]
  tier-old:
    gpus: ["Tesla P100"]
    ptx: none
recipes:
  - name: saxpy
    framework: cmake
    source: {path: src}
    tiers: [tier-new, tier-mixed, tier-old]
  - name: kernels
    framework: nvcc
    source: {path: src}
    tiers: [tier-old]
    build: [[nvcc, k.cu]]
)";

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-plan-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(m_dir);
    std::ofstream(m_dir / "orchestrate.yaml") << k_config;
    // No host toolkit: the plan's image does not depend on this machine.
    ::setenv("ORCHESTRATE_HOST_CUDA", (m_dir / "no-cuda").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("ORCHESTRATE_HOST_CUDA");
    fs::remove_all(m_dir);
  }
  PlanReport run(std::vector<std::string> tiers) {
    return plan(load_plan_config(m_dir / "orchestrate.yaml"), PlanScope{.tiers = std::move(tiers)});
  }
  fs::path m_dir;
};

// Issue 13: a tier whose driver no longer runs one of its GPUs is an error
// naming the GPU and the last branch that does; at that branch it plans.
TEST_F(PlanTest, ADriverPastAGenerationsLastBranchIsAnError) {
  const auto write = [&](const std::string& gpus, const std::string& driver) {
    std::ofstream(m_dir / "orchestrate.yaml") << "tiers:\n  old:\n    gpus: " << gpus << "\n    driver: \"" << driver
                                              << "\"\nrecipes:\n  - name: k\n    framework: cmake\n"
                                                 "    source: {path: src}\n    tiers: [old]\n";
  };
  write(R"(["Tesla V100", "Tesla K80", "A100"])", "590.44.01");
  try {
    run({});
    FAIL() << "planned a tier its driver cannot run";
  } catch (const util::Failure& failure) {
    EXPECT_EQ(failure.code(), util::ExitCode::bad_input);
    ASSERT_EQ(failure.diagnostics().size(), 2u);
    EXPECT_EQ(failure.diagnostics()[0].message,
              "tier old: driver 590.44.01 no longer runs Tesla V100 (7.0); the last driver branch that does is R580 "
              "(NVIDIA's driver and architecture matrix): give it a tier whose driver is R580 or older");
    EXPECT_EQ(failure.diagnostics()[0].where.line, 3);
    EXPECT_EQ(failure.diagnostics()[1].message,
              "tier old: driver 590.44.01 no longer runs Tesla K80 (3.7); the last driver branch that does is R470 "
              "(NVIDIA's driver and architecture matrix): give it a tier whose driver is R470 or older");
  }
  write(R"(["Tesla V100"])", "580.95.05");
  EXPECT_EQ(run({}).plans.size(), 1u);
}

// Issue 29: R470 cannot drive an H100 (Hopper's first branch is R520): an
// error at the GPU's line naming the branch and its source, not a
// minor-version warning; at R520 it plans.
TEST_F(PlanTest, ADriverBeforeAGenerationsFirstBranchIsAnError) {
  const auto write = [&](const std::string& driver) {
    std::ofstream(m_dir / "orchestrate.yaml")
        << "tiers:\n  hopper:\n    gpus: [\"A100\", \"H100\"]\n    driver: \"" << driver
        << "\"\nrecipes:\n  - name: k\n    framework: cmake\n"
           "    source: {path: src}\n    tiers: [hopper]\n";
  };
  write("470.82.01");
  try {
    run({});
    FAIL() << "planned an H100 on R470";
  } catch (const util::Failure& failure) {
    EXPECT_EQ(failure.code(), util::ExitCode::bad_input);
    ASSERT_EQ(failure.diagnostics().size(), 1u);
    const std::string& m = failure.diagnostics()[0].message;
    EXPECT_TRUE(
        m.starts_with("tier hopper: driver 470.82.01 cannot run H100 (9.0): the first driver branch that "
                      "runs CC 9.0 GPUs is R520 (520.56.06; OGKM 520.56.06:"))
        << m;
    EXPECT_TRUE(m.ends_with("give the tier a driver of R520 or newer")) << m;
    EXPECT_EQ(failure.diagnostics()[0].where.line, 3);
  }
  write("520.56.06");
  EXPECT_EQ(run({}).plans.size(), 1u);
}

// Issue 13: `requires: {pytorch: "2.4"}` on a tier of B200 and RTX 5090 was
// planned as 10.0;12.0+PTX, which 2.4's extension builder rejects. Now it is
// unsatisfiable with the reason and the oldest release that serves; with
// ">=2.4" the plan stands and says which release the build needs.
TEST_F(PlanTest, APyTorchReleaseBoundsTheArchsItsTierCanGet) {
  const auto write = [&](const std::string& range) {
    std::ofstream(m_dir / "orchestrate.yaml") << "tiers:\n  next:\n    gpus: [\"B200\", \"RTX 5090\"]\n"
                                                 "recipes:\n  - name: ext\n    framework: pytorch\n"
                                                 "    source: {path: src}\n    requires: {pytorch: \""
                                              << range << "\"}\n    tiers: [next]\n";
  };
  write("2.4");
  auto report = run({});
  ASSERT_EQ(report.plans.size(), 1u);
  EXPECT_FALSE(report.plans[0].ok);
  EXPECT_EQ(report.plans[0].reasons,
            (std::vector<std::string>{
                "pytorch 2.4: its official builds use CUDA 11.8, 12.1, 12.4 (pytorch/pytorch RELEASE.md, Release "
                "Compatibility Matrix)",
                "B200 (10.0) needs CUDA 12.8 to 13.5, but the available toolkits are 12.4 12.1 11.8",
                "GeForce RTX 5090 (12.0) needs CUDA 12.8 to 13.5, but the available toolkits are 12.4 12.1 11.8",
                "the oldest PyTorch whose official builds compile for every GPU of tier next is 2.7 (CUDA 12.8)"}));
  // ">=2.4": CUDA 13.2, whose builds (2.12 to 2.14) have no arch list in the
  // tables; the plan says so rather than check against the wrong release.
  write(">=2.4");
  report = run({});
  ASSERT_TRUE(report.plans[0].ok);
  EXPECT_EQ(report.plans[0].toolkit->version, util::Version(13, 2));
  EXPECT_EQ(report.plans[0].reasons.back(),
            "no release of pytorch >=2.4 with a CUDA 13.2 build has its TORCH_CUDA_ARCH_LIST in the tables (no source "
            "gave 2.8 to 2.10 or 2.12 on): the archs are checked against none");
  // With CUDA below 12.9 the toolkit is 12.8: the releases with a 12.8 build
  // are 2.7 to 2.11, and 2.7 is the oldest of them that the tables know.
  std::ofstream(m_dir / "orchestrate.yaml") << "tiers:\n  next:\n    gpus: [\"B200\", \"RTX 5090\"]\n"
                                               "recipes:\n  - name: ext\n    framework: pytorch\n"
                                               "    source: {path: src}\n    requires: {pytorch: \">=2.4\", "
                                               "cuda: \"<12.9\"}\n    tiers: [next]\n";
  report = run({});
  ASSERT_TRUE(report.plans[0].ok);
  EXPECT_EQ(report.plans[0].toolkit->version, util::Version(12, 8));
  EXPECT_EQ(report.plans[0].reasons.back(),
            "PyTorch 2.7 (the oldest of pytorch >=2.4 with a CUDA 12.8 build) accepts 10.0, 12.0 in "
            "TORCH_CUDA_ARCH_LIST (pytorch/docs 2.7 cpp_extension.html @05c929fb)");
  for (const auto& warning : report.plans[0].warnings) EXPECT_EQ(warning.find("needs PyTorch"), std::string::npos);
}

// Issue 13: a TensorFlow range plans with each release's tested CUDA and
// cuDNN; a tier none of them compiles for is unsatisfiable saying so.
TEST_F(PlanTest, TensorflowPlansWithItsTestedConfiguration) {
  const auto write = [&](const std::string& gpus, const std::string& range) {
    std::ofstream(m_dir / "orchestrate.yaml") << "tiers:\n  t:\n    gpus: " << gpus
                                              << "\nrecipes:\n  - name: tf\n    framework: tensorflow\n"
                                                 "    source: {path: src}\n    requires: {tensorflow: \""
                                              << range << "\"}\n    tiers: [t]\n";
  };
  write("[A100, H100]", ">=2.12,<2.18");
  auto report = run({});
  const PlanEntry* e = &report.plans.at(0);
  ASSERT_TRUE(e->ok) << e->reasons.at(0);
  // 2.16/2.17's 12.3 + 8.9 is not a pair of the cuDNN table (8.9's builds
  // span 12.0-12.2 in cuDNN 8.9.6's matrix), so 2.15's 12.2 + 8.9 plans.
  EXPECT_EQ(e->toolkit->version, util::Version(12, 2));
  EXPECT_EQ(e->cudnn->version, util::Version(8, 9));
  EXPECT_EQ(e->reasons.back(),
            "tensorflow 2.15 is tested with CUDA 12.2 and cuDNN 8.9 (tensorflow.org/install/source#gpu "
            "(tensorflow/docs source.md @7c365021))");
  const auto& tf = std::get<flags::TensorflowVars>(e->framework.vars);
  EXPECT_FALSE(tf.hermetic);
  EXPECT_FALSE(tf.hermetic_cuda_version);

  write("[B200]", ">=2.16");
  report = run({});
  e = &report.plans.at(0);
  EXPECT_FALSE(e->ok);
  EXPECT_EQ(std::vector<std::string>(e->reasons.begin(), e->reasons.begin() + 2),
            (std::vector<std::string>{"tensorflow 2.18 to 2.21 are tested with CUDA 12.5 and cuDNN 9.3 "
                                      "(tensorflow.org/install/source#gpu (tensorflow/docs source.md @7c365021))",
                                      "tensorflow 2.16 to 2.17 are tested with CUDA 12.3 and cuDNN 8.9 "
                                      "(tensorflow.org/install/source#gpu (tensorflow/docs source.md @7c365021))"}));
  EXPECT_EQ(e->reasons.at(2), "B200 (10.0) needs CUDA 12.8 to 13.5, but the available toolkits are 12.5");
}

// Issue 13: BVLC Caffe 1.0 compiles with cuDNN 3 to 7 only; a recipe that
// asks for cuDNN 8 of it is told why, and without a cudnn range it plans
// the CUDA 10.2 / cuDNN 7.6 of its era. `cudnn: none` plans no cuDNN.
TEST_F(PlanTest, CaffesReleaseBoundsItsCudnn) {
  const auto write = [&](const std::string& requires_) {
    std::ofstream(m_dir / "orchestrate.yaml") << "tiers:\n  t:\n    gpus: [\"Tesla T4\"]\n"
                                                 "recipes:\n  - name: caffe\n    framework: caffe-cmake\n"
                                                 "    source: {path: src}\n    requires: "
                                              << requires_ << "\n    tiers: [t]\n";
  };
  write(R"({caffe: "1.0", cudnn: ">=8"})");
  auto report = run({});
  EXPECT_FALSE(report.plans.at(0).ok);
  EXPECT_EQ(report.plans.at(0).reasons,
            std::vector<std::string>{"caffe 1.0 (BVLC/caffe) compiles with cuDNN >=3,<8 (BVLC/caffe 1.0 "
                                     "cmake/Cuda.cmake; cuDNN 8 removed its calls, BVLC/caffe#6970), and the "
                                     "recipe requires cudnn >=8"});
  write(R"({caffe: "1.0"})");
  report = run({});
  const PlanEntry* e = &report.plans.at(0);
  ASSERT_TRUE(e->ok) << e->reasons.at(0);
  EXPECT_EQ(e->toolkit->version, util::Version(10, 2));
  EXPECT_EQ(e->cudnn->version, util::Version(7, 6));
  write(R"({caffe: "1.0", cudnn: none, cuda: ">=11.8"})");
  report = run({});
  e = &report.plans.at(0);
  ASSERT_TRUE(e->ok) << e->reasons.at(0);
  EXPECT_EQ(e->cudnn, nullptr);
  write(R"({caffe: ">=0.17"})");
  report = run({});
  ASSERT_TRUE(report.plans.at(0).ok);
  EXPECT_EQ(report.plans.at(0).reasons.back(),
            "caffe >=0.17 spans 0.17 (NVIDIA/caffe) and 1.0 (BVLC/caffe), whose cuDNN bounds differ: neither is "
            "applied (name one release)");
  write(R"({caffe: "0.17", cudnn: ">=8"})");
  report = run({});
  ASSERT_TRUE(report.plans.at(0).ok);
  EXPECT_GE(report.plans.at(0).cudnn->version, util::Version(8, 0));
}

TEST_F(PlanTest, EntriesHoldTheTableRowsTheArchSetAndTypedVariables) {
  const PlanReport report = run({"tier-new"});
  ASSERT_EQ(report.plans.size(), 1u);
  const PlanEntry& e = report.plans[0];
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.recipe, report.config->find_recipe("saxpy"));
  EXPECT_EQ(e.tier, report.config->find_tier("tier-new"));
  EXPECT_EQ(e.toolkit, compat::find_toolkit(util::Version(12, 4))) << "a row of the table, not a string";
  EXPECT_EQ(e.cudnn, nullptr) << "cmake uses no cuDNN";
  EXPECT_EQ(e.archs, (arch::ArchSet{.sass = {{8, 0}, {9, 0}}, .ptx = {{9, 0}}}));
  const auto* vars = std::get_if<flags::CmakeVars>(&e.framework.vars);
  ASSERT_NE(vars, nullptr);
  EXPECT_EQ(vars->architectures, "80-real;90");
  ASSERT_TRUE(e.image);
  EXPECT_EQ(e.image->reference, "orchestrate/cuda:12.4-trixie");
  EXPECT_FALSE(e.image_needs_registry);
}

// Issue 13: the plan takes the newest toolkit something here provides (an
// offline image, the host's toolkit, or under the official preference an
// nvidia/cuda tag); a newer one that nothing provides is a note.
TEST_F(PlanTest, ThePlanPrefersAToolkitSomethingProvides) {
  PlanReport report = run({"tier-new"});
  const PlanEntry* e = &report.plans.at(0);
  EXPECT_EQ(e->toolkit->version, util::Version(12, 4));
  EXPECT_EQ(e->notes, std::vector<std::string>{
                          "CUDA 13.0 would also serve this tier; no image provides it here (with registry access: "
                          "docker.io/nvidia/cuda:13.0.3-devel-ubuntu22.04, ORCHESTRATE_IMAGE_PREFERENCE=official)"});
  EXPECT_EQ(e->reasons.at(1),
            "CUDA 12.4 is provided by orchestrate/cuda:12.4-trixie; CUDA 13.0, newer, is provided by nothing here");

  // A host toolkit of 13.0 provides it (through the host-mount image).
  const fs::path cuda = m_dir / "cuda";
  fs::create_directories(cuda / "bin");
  std::ofstream(cuda / "bin" / "nvcc") << "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n";
  fs::permissions(cuda / "bin" / "nvcc", fs::perms::owner_all);
  ::setenv("ORCHESTRATE_HOST_CUDA", cuda.c_str(), 1);
  // Not while its tree lacks what every build needs (issue 27).
  report = run({"tier-new"});
  EXPECT_EQ(report.plans.at(0).toolkit->version, util::Version(12, 4));
  orc::unit::fake_toolkit_parts(cuda);
  report = run({"tier-new"});
  e = &report.plans.at(0);
  EXPECT_EQ(e->toolkit->version, util::Version(13, 0));
  EXPECT_TRUE(e->notes.empty());
  EXPECT_EQ(e->image->reference, "orchestrate/cuda:host-bookworm");

  // Under the official preference the nvidia/cuda tag provides it.
  ::setenv("ORCHESTRATE_HOST_CUDA", (m_dir / "no-cuda").c_str(), 1);
  ::setenv("ORCHESTRATE_IMAGE_PREFERENCE", "official", 1);
  report = run({"tier-new"});
  ::unsetenv("ORCHESTRATE_IMAGE_PREFERENCE");
  e = &report.plans.at(0);
  EXPECT_EQ(e->toolkit->version, util::Version(13, 0));
  EXPECT_TRUE(e->notes.empty());

  // A toolkit the tier's driver fully supports (12.2 on 535) is never traded
  // for a provided one it would run only under minor-version compatibility.
  std::ofstream(m_dir / "orchestrate.yaml") << "tiers:\n  a:\n    gpus: [A100]\n    driver: \"535.104.05\"\n"
                                               "recipes:\n  - name: k\n    framework: cmake\n    source: {path: src}\n"
                                               "    requires: {cuda: \">=12\"}\n    tiers: [a]\n";
  report = run({});
  e = &report.plans.at(0);
  EXPECT_EQ(e->toolkit->version, util::Version(12, 2));
  EXPECT_TRUE(e->notes.empty());
  for (const auto& w : e->warnings) EXPECT_EQ(w.find("minor-version"), std::string::npos) << w;

  // Nothing provided serves B200: the plan is the newest toolkit, with the
  // warning that no image serves it, as before.
  std::ofstream(m_dir / "orchestrate.yaml") << "tiers:\n  b:\n    gpus: [B200]\nrecipes:\n  - name: k\n"
                                               "    framework: cmake\n    source: {path: src}\n    tiers: [b]\n";
  report = run({});
  e = &report.plans.at(0);
  EXPECT_EQ(e->toolkit, &compat::toolkit_table().back());
  EXPECT_TRUE(e->notes.empty());
  EXPECT_FALSE(e->image) << "no image, offline or official, serves " << e->toolkit->version.str();
  EXPECT_NE(std::ranges::find(e->warnings, "no build image serves CUDA " + e->toolkit->version.str() +
                                               ": neither an offline image (orchestrate images list) nor an "
                                               "nvidia/cuda tag"),
            e->warnings.end());
}

TEST_F(PlanTest, ASplitNamesEachPartsToolkit) {
  const PlanReport report = run({"tier-mixed"});
  ASSERT_EQ(report.plans.size(), 1u);
  const PlanEntry& e = report.plans[0];
  EXPECT_FALSE(e.ok);
  ASSERT_EQ(e.split.size(), 2u);
  EXPECT_EQ(e.split[0].gpus, std::vector<std::string>{"Tesla K80"});
  EXPECT_EQ(e.split[0].toolkit, compat::find_toolkit(util::Version(11, 8)));
  EXPECT_EQ(e.split[1].toolkit, compat::find_toolkit(util::Version(13, 0)));
}

site::HostToolkit installed(int major, int minor, const std::string& root) {
  return site::HostToolkit{
      .version = util::Version(std::vector<int>{major, minor, 1}), .root = root, .found_by = "test"};
}

TEST_F(PlanTest, TheHostPlanSaysWhenItFallsBackToAnotherToolkit) {
  const PlanReport full = run({"tier-new"});
  const PlanReport host = plan_on_host(full, PlanScope{.tiers = {"tier-new"}}, {installed(11, 8, "/opt/cuda-11.8")});
  ASSERT_EQ(host.plans.size(), 1u);
  const PlanEntry& e = host.plans[0];
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.toolkit, compat::find_toolkit(util::Version(11, 8)));
  ASSERT_TRUE(e.host);
  EXPECT_EQ(e.host->toolkit.root, "/opt/cuda-11.8");
  EXPECT_EQ(e.host->instead_of, compat::find_toolkit(util::Version(12, 4)));
  ASSERT_FALSE(e.warnings.empty());
  EXPECT_NE(e.warnings.back().find("builds with CUDA 11.8"), std::string::npos) << e.warnings.back();
  EXPECT_NE(e.warnings.back().find("not the CUDA 12.4"), std::string::npos) << e.warnings.back();
  const auto j = nlohmann::json::parse(cli::render(host, cli::Format::json));
  EXPECT_EQ(j["plans"][0]["host"]["toolkit"], "11.8.1");
  EXPECT_EQ(j["plans"][0]["host"]["instead_of"], "12.4");

  // The same toolkit as the full plan: no fallback to speak of.
  const PlanReport same = plan_on_host(full, PlanScope{.tiers = {"tier-new"}}, {installed(12, 4, "/opt/cuda-12.4")});
  ASSERT_TRUE(same.plans[0].host);
  EXPECT_EQ(same.plans[0].host->instead_of, nullptr);
  EXPECT_TRUE(nlohmann::json::parse(cli::render(same, cli::Format::json))["plans"][0]["host"]["instead_of"].is_null());

  // No toolkit here at all: unservable, with what the full plan would use.
  const PlanReport none = plan_on_host(full, PlanScope{.tiers = {"tier-new"}}, {});
  EXPECT_FALSE(none.plans[0].ok);
  EXPECT_TRUE(none.plans[0].host_unservable);
  EXPECT_NE(none.plans[0].reasons.at(0).find("it would use CUDA 12.4"), std::string::npos);
}

TEST_F(PlanTest, AWarningOfSeveralPlansIsSaidOnceWithThePlansItConcerns) {
  const PlanReport report = run({"tier-old"});
  ASSERT_EQ(report.plans.size(), 2u);
  const std::string shared = "ptx: none embeds no PTX";
  const auto grouped = report.grouped_warnings();
  std::size_t found = 0;
  for (const auto& w : grouped) {
    if (w.text.find(shared) == std::string::npos) continue;
    ++found;
    EXPECT_EQ(w.plans, (std::vector<std::string>{"saxpy/tier-old", "kernels/tier-old"}));
  }
  EXPECT_EQ(found, 1u);
  const std::string text = cli::render(report, cli::Format::text);
  const auto first = text.find(shared);
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find(shared, first + 1), std::string::npos) << "said twice:\n" << text;
  EXPECT_NE(text.find("for saxpy/tier-old, kernels/tier-old"), std::string::npos) << text;
}

TEST_F(PlanTest, JsonHasNullsForWhatIsUnknownAndTheConfigurationsWarnings) {
  auto text = std::string(k_config);
  text.insert(text.find("recipes:"), "  tier-unused:\n    gpus: [\"A100\"]\n");
  std::ofstream(m_dir / "orchestrate.yaml") << text;
  const auto j = nlohmann::json::parse(cli::render(run({"tier-mixed"}), cli::Format::json));
  const auto& p = j["plans"][0];
  EXPECT_EQ(p["status"], "unsatisfiable");
  for (const char* field : {"toolkit", "cudnn", "image", "host"}) EXPECT_TRUE(p[field].is_null()) << field;
  ASSERT_EQ(j["warnings"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["warnings"][0]["message"], "tier 'tier-unused' is not used by any recipe");
  EXPECT_EQ(j["warnings"][0]["line"], 10);
}

// Issue 27: the host plan and what installed toolkits lack.
constexpr const char* k_needs_config = R"(toolkits: ["11.8", "12.4", "13.0"]
tiers:
  tier-new:
    gpus: ["A100", "H100"]
recipes:
  - name: fft
    framework: cmake
    source: {path: src}
    tiers: [tier-new]
    requires: {cuda: ">=12.0"}
    needs: [cufft]
  - name: plain
    framework: cmake
    source: {path: src}
    tiers: [tier-new]
)";

site::HostToolkit lacking(int major, int minor, const std::string& root, std::vector<compat::MissingPart> missing) {
  return site::HostToolkit{.version = util::Version(std::vector<int>{major, minor, 1}),
                           .root = root,
                           .found_by = "test",
                           .inventory = {.missing = std::move(missing)}};
}

const compat::MissingPart k_no_cufft{.part = compat::ToolkitPart::cufft, .files = {"libcufft.so", "cufft.h"}};
const compat::MissingPart k_no_cudart{.part = compat::ToolkitPart::cudart, .files = {"libcudart.so"}};

PlanReport on_host(const fs::path& config, const std::vector<site::HostToolkit>& host) {
  const PlanScope scope;
  return plan_on_host(plan(load_plan_config(config), scope), scope, host);
}

// The reason with its first recipe path shortened to the file name (the
// fixture's configuration lives in a temporary directory).
std::string shortened(std::string text, const fs::path& dir) {
  const std::string prefix = (dir / "").string();
  for (auto at = text.find(prefix); at != std::string::npos; at = text.find(prefix)) text.erase(at, prefix.size());
  return text;
}

TEST_F(PlanTest, AToolkitLackingADeclaredLibraryIsPassedOverForThatRecipeOnly) {
  std::ofstream(m_dir / "orchestrate.yaml") << k_needs_config;
  const auto report = on_host(m_dir / "orchestrate.yaml", {lacking(13, 0, "/usr/local/cuda-13.0", {k_no_cufft}),
                                                           lacking(12, 4, "/t/cuda-12.4", {})});
  ASSERT_EQ(report.plans.size(), 2u);
  const PlanEntry& fft = report.plans[0];
  ASSERT_TRUE(fft.ok) << fft.reasons.at(0);
  EXPECT_EQ(fft.toolkit->version, util::Version(12, 4));
  EXPECT_EQ(fft.host->toolkit.root, "/t/cuda-12.4");
  std::vector<std::string> reasons;
  for (const auto& r : fft.reasons) reasons.push_back(shortened(r, m_dir));
  EXPECT_NE(std::ranges::find(reasons,
                              "CUDA 13.0 skipped: installed at /usr/local/cuda-13.0 without cuFFT (libcufft.so, "
                              "cufft.h), which orchestrate.yaml:11:13 needs"),
            reasons.end())
      << reasons.at(1);
  const PlanEntry& plain = report.plans[1];
  ASSERT_TRUE(plain.ok);
  EXPECT_EQ(plain.toolkit->version, util::Version(13, 0)) << "plain needs no cuFFT";
}

TEST_F(PlanTest, OfTwoTreesOfOneVersionTheOneThatHasItAllIsUsed) {
  std::ofstream(m_dir / "orchestrate.yaml") << k_needs_config;
  const auto report = on_host(m_dir / "orchestrate.yaml",
                              {lacking(12, 4, "/a/cuda-12.4", {k_no_cudart}), lacking(12, 4, "/b/cuda-12.4", {})});
  ASSERT_TRUE(report.plans[1].ok);
  EXPECT_EQ(report.plans[1].host->toolkit.root, "/b/cuda-12.4");
}

TEST_F(PlanTest, WhenNoInstalledToolkitHasItThePlanSaysWhatEachLacksAndWhatWould) {
  std::ofstream(m_dir / "orchestrate.yaml") << k_needs_config;
  const auto report = on_host(m_dir / "orchestrate.yaml", {lacking(12, 4, "/t/cuda-12.4", {k_no_cufft, k_no_cudart}),
                                                           lacking(11, 8, "/t/cuda-11.8", {})});
  const PlanEntry& fft = report.plans[0];
  EXPECT_FALSE(fft.ok);
  EXPECT_TRUE(fft.host_unservable) << "exit 3: the host lacks a toolkit";
  ASSERT_EQ(fft.reasons.size(), 1u);
  EXPECT_EQ(
      shortened(fft.reasons[0], m_dir),
      "the toolkits on this host (12.4.1 (/t/cuda-12.4), 11.8.1 (/t/cuda-11.8)) cannot serve it: CUDA 12.4: "
      "installed at /t/cuda-12.4 without the shared CUDA runtime (libcudart.so), which every build needs; cuFFT "
      "(libcufft.so, cufft.h), which orchestrate.yaml:11:13 needs; CUDA 11.8: recipe requires cuda >=12.0; on this "
      "host 11.8.1 (/t/cuda-11.8) has what it needs; with every configured toolkit it would use CUDA 12.4: "
      "install that toolkit here "
      "(ORCHESTRATE_HOST_TOOLKITS names extra ones) or build in a container engine");
  // The recipe without a range falls back to the complete 11.8, and says why.
  const PlanEntry& plain = report.plans[1];
  ASSERT_TRUE(plain.ok);
  EXPECT_EQ(plain.toolkit->version, util::Version(11, 8));
  EXPECT_NE(std::ranges::find(plain.reasons,
                              "CUDA 12.4 skipped: installed at /t/cuda-12.4 without the shared CUDA runtime "
                              "(libcudart.so), which every build needs"),
            plain.reasons.end());
}

}  // namespace
}  // namespace orc::app
