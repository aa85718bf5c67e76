// Cache key, artifact collection and verification (the store is cache/'s,
// tested in tests/unit/cache).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "orchestrator/app/build/build_key.hpp"
#include "orchestrator/app/build/build_source.hpp"
#include "orchestrator/app/build/build_verify.hpp"
#include "orchestrator/inspect/verdict.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("orc-app-test-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  void write(const fs::path& rel, const std::string& text) {
    fs::create_directories((m_dir / rel).parent_path());
    std::ofstream(m_dir / rel, std::ios::binary) << text;
  }
  fs::path m_dir;
};

KeyInputs inputs() {
  return KeyInputs{.tool_version = "0.1.0",
                   .recipe_text = "name=saxpy\n",
                   .tier = "tier-new",
                   .source_kind = "path",
                   .source_revision = "tree:abc",
                   .engine = "docker",
                   .image = "orchestrate/cuda:host-bookworm",
                   .image_digest = "",
                   .toolkit = "13.0",
                   .cudnn = "",
                   .sass = {"sm_80"},
                   .ptx = {"compute_80"},
                   .env = {"CUDAARCHS=80"},
                   .steps = {{"cmake", "-S", "/src"}}};
}

TEST(BuildKey, SameInputsSameKeyAndEveryFieldCounts) {
  const std::string key = hash_key(inputs()).hex();
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, hash_key(inputs()).hex());
  // A GPU of a new arch (H100 beside A100) reaches the key as its SASS.
  auto other = inputs();
  other.sass.push_back("sm_90");
  EXPECT_NE(hash_key(other).hex(), key);
  other = inputs();
  other.source_revision = "tree:abd";
  EXPECT_NE(hash_key(other).hex(), key);
  other = inputs();
  other.image_digest = "sha256:1234";
  EXPECT_NE(hash_key(other).hex(), key);
}

TEST(BuildKey, FieldsAreDelimitedSoMovedBytesChangeTheKey) {
  KeyHasher a, b;
  a.list("env", {"AB", "C"});
  b.list("env", {"A", "BC"});
  EXPECT_NE(a.hex(), b.hex());
  KeyHasher c, d;
  c.text("x", "1");
  c.text("y", "");
  d.text("x", "");
  d.text("y", "1");
  EXPECT_NE(c.hex(), d.hex());
}

// Issue 27: ["echo", "a b"] and ["echo", "a", "b"] are different steps.
TEST(BuildKey, ArgumentBoundariesOfStepsChangeTheKey) {
  auto one = inputs();
  one.steps = {{"echo", "a b"}};
  auto two = inputs();
  two.steps = {{"echo", "a", "b"}};
  EXPECT_NE(hash_key(one).hex(), hash_key(two).hex());
  auto split = inputs();
  split.steps = {{"echo"}, {"a", "b"}};
  EXPECT_NE(hash_key(split).hex(), hash_key(two).hex());
  // explain shows the boundary as a shell would need it.
  EXPECT_NE(hash_key(one).explain().find("steps[0]: echo 'a b'\n"), std::string::npos) << hash_key(one).explain();
}

TEST(BuildKey, EveryVariableOfTheEnvironmentChangesTheKey) {
  const std::string key = hash_key(inputs()).hex();
  auto other = inputs();
  other.env.push_back("GPU_COMPUTE_CAPABILITY=90");
  EXPECT_NE(hash_key(other).hex(), key);
  other = inputs();
  other.env = {"CUDAARCHS=80", "PATH=/orc/front/bin:/usr/local/cuda/bin:/usr/bin"};
  EXPECT_NE(hash_key(other).hex(), key);
}

TEST(BuildKey, ExplainPrintsEveryFieldOnePerLine) {
  const std::string text = hash_key(inputs()).explain();
  for (const char* line :
       {"tier: tier-new\n", "source.revision: tree:abc\n", "image.reference: orchestrate/cuda:host-bookworm\n",
        "image.digest: unknown\n", "archs.sass[0]: sm_80\n", "env[0]: CUDAARCHS=80\n", "steps[0]: cmake -S /src\n",
        "tool.version: 0.1.0\n", "recipe: name=saxpy\\n\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;
}

TEST_F(TempDir, TreeHashFollowsContentAndIgnoresGit) {
  write("src/a.cu", "kernel");
  write("src/sub/b.txt", "b");
  const auto first = tree_hash(m_dir / "src");
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->starts_with("tree:"));
  write("src/.git/HEAD", "ref: refs/heads/main");
  EXPECT_EQ(*tree_hash(m_dir / "src"), *first);
  write("src/a.cu", "kernel2");
  EXPECT_NE(*tree_hash(m_dir / "src"), *first);
}

TEST_F(TempDir, GlobsCollectFromTheFirstRootThatMatches) {
  write("build/saxpy", "x");
  write("build/lib/libk.so.1", "x");
  write("build/lib/libk.a", "x");
  write("src/dist/k-1.0.whl", "x");
  const auto got = collect_artifacts({"saxpy", "lib/libk.so*", "dist/*.whl"}, {m_dir / "build", m_dir / "src"});
  ASSERT_TRUE(got) << got.error();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].name, "saxpy");
  EXPECT_EQ((*got)[1].name, "lib/libk.so.1");
  EXPECT_EQ((*got)[2].name, "dist/k-1.0.whl");
  EXPECT_EQ((*got)[2].path, m_dir / "src/dist/k-1.0.whl");
  const auto none = collect_artifacts({"dist/*.tar.gz"}, {m_dir / "build", m_dir / "src"});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().find("artifact glob 'dist/*.tar.gz' matched no file"), std::string::npos) << none.error();
  EXPECT_FALSE(collect_artifacts({"../etc/passwd"}, {m_dir}));
}

// The CMake project: the library sits two directories below the
// root it is found under, and `**/` reaches it from either root.
TEST_F(TempDir, DoubleStarGlobsCollectFilesDirectoriesDeep) {
  write("src/build/lib/libx.so", "x");
  write("src/build/lib/.libs/libx.so", "hidden");
  const auto got = collect_artifacts({"**/libx.so"}, {m_dir / "build", m_dir / "src"});
  ASSERT_TRUE(got) << got.error();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].name, "build/lib/libx.so");
  EXPECT_EQ((*got)[0].path, m_dir / "src/build/lib/libx.so");
  const auto under = collect_artifacts({"build/**"}, {m_dir / "src"});
  ASSERT_TRUE(under) << under.error();
  ASSERT_EQ(under->size(), 1u);
  EXPECT_EQ((*under)[0].name, "build/lib/libx.so");
}

TEST_F(TempDir, AGlobThatMatchesNothingNamesTheRootsAndTheNearestFilesOfThatName) {
  write("src/build/lib/libx.so", "x");
  const std::vector<fs::path> roots = {m_dir / "build", m_dir / "src"};
  const std::string where = (m_dir / "build").string() + " or " + (m_dir / "src").string();
  const auto one = collect_artifacts({"lib/libx.so"}, roots);
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error(),
            "artifact glob 'lib/libx.so' matched no file under " + where + " (did you mean 'build/lib/libx.so'?)");

  // Up to three, nearest first; a hidden directory is named too (it is why
  // a glob did not see the file); a file of another name is not.
  write("build/out/libx.so", "x");
  write("build/.libs/libx.so", "x");
  write("build/other/deeper/libx.so", "x");
  write("build/lib/liby.so", "x");
  const auto three = collect_artifacts({"lib/libx.so"}, roots);
  ASSERT_FALSE(three);
  EXPECT_EQ(three.error(), "artifact glob 'lib/libx.so' matched no file under " + where +
                               " (did you mean '.libs/libx.so', 'out/libx.so' or 'build/lib/libx.so'?)");

  // The last component's pattern picks the candidates.
  const auto pattern = collect_artifacts({"bin/liby*.so"}, roots);
  ASSERT_FALSE(pattern);
  EXPECT_EQ(pattern.error(),
            "artifact glob 'bin/liby*.so' matched no file under " + where + " (did you mean 'lib/liby.so'?)");
}

inspect::FileReport report_with(std::set<arch::ComputeCapability> sass, std::set<arch::ComputeCapability> ptx) {
  inspect::FileReport r;
  r.path = "build/saxpy";
  r.format = "elf";
  r.sass = std::move(sass);
  r.ptx = std::move(ptx);
  r.entries = r.sass.size() + r.ptx.size();
  r.elf_entries = r.sass.size();
  r.ptx_entries = r.ptx.size();
  return r;
}

// A tier of an A100 and an H100, planned with SASS for both and PTX for the H100.
struct TierPlan {
  arch::ArchSet archs{.sass = {{8, 0}, {9, 0}}, .ptx = {{9, 0}}};
  std::vector<recipe::TierGpu> gpus{{.name = "A100", .cc = {8, 0}}, {.name = "H100", .cc = {9, 0}}};
};
TierPlan tier_plan() { return {}; }
Verification verify_artifacts(const TierPlan& plan, const std::vector<inspect::FileReport>& reports) {
  return app::verify_artifacts(plan.archs, plan.gpus, reports);
}

// Issue 11: a manifest is UTF-8 JSON; an artifact named by other bytes is
// refused before anything is stored, named with \xNN for the stray bytes.
TEST(Verify, ArtifactNamesThatAreNotUtf8CannotBeStored) {
  const std::vector<CollectedArtifact> files = {{.name = "lib/libok.so", .path = "/b/lib/libok.so"},
                                                {.name = "lib/caf\xc3\xa9.so", .path = "/b/lib/x"},
                                                {.name = "lib/bad\xff.so", .path = "/b/lib/y"}};
  const auto refused = unstorable_names(files);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0],
            "artifact 'lib/bad\\xff.so' has a name that is not UTF-8 (\\xNN marks each stray byte); a manifest names "
            "its files in UTF-8: rename it in a build step, or narrow `artifacts:` to leave it out");
  EXPECT_TRUE(unstorable_names({files[0], files[1]}).empty());
}

TEST(Verify, ExactlyThePlannedArchsPass) {
  const auto v = verify_artifacts(tier_plan(), {report_with({{8, 0}, {9, 0}}, {{9, 0}})});
  EXPECT_TRUE(v.ok());
  EXPECT_TRUE(v.warnings.empty());
}

TEST(Verify, AMissingSassNamesTheGpuThatFails) {
  const auto v = verify_artifacts(tier_plan(), {report_with({{9, 0}}, {{9, 0}})});
  ASSERT_FALSE(v.ok());
  const std::string all = v.errors.at(0) + "|" + v.errors.at(1);
  EXPECT_NE(all.find("planned SASS sm_80 is missing"), std::string::npos) << all;
  EXPECT_NE(all.find("A100 (8.0) would see \"no kernel image is available for execution on the device\""),
            std::string::npos)
      << all;
}

TEST(Verify, JitIsAFailureWhenThePlanGaveTheGpuSass) {
  auto plan = tier_plan();
  plan.archs = arch::ArchSet{.sass = {{8, 0}}, .ptx = {{8, 0}}};
  const auto v = verify_artifacts(plan, {report_with({{8, 0}}, {{8, 0}})});
  // H100 gets no SASS by plan design, so JIT there is a warning only.
  EXPECT_TRUE(v.ok());
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("H100 (9.0) runs by PTX JIT"), std::string::npos);
}

TEST(Verify, AnExtraArchIsAWarningAndNoDeviceCodeAnError) {
  const auto v = verify_artifacts(tier_plan(), {report_with({{8, 0}, {8, 6}, {9, 0}}, {{9, 0}})});
  EXPECT_TRUE(v.ok());
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("embeds SASS sm_86, which the plan did not ask for"), std::string::npos);
  EXPECT_FALSE(verify_artifacts(tier_plan(), {report_with({}, {})}).ok());
}

// An -rdc artifact: the registered (device-linked) module and one
// relocatable module, each with its SASS and PTX.
inspect::FileReport rdc_report(std::set<arch::ComputeCapability> linked_sass,
                               std::set<arch::ComputeCapability> rel_sass, std::set<arch::ComputeCapability> rel_ptx) {
  inspect::FileReport r = report_with(linked_sass, {});
  inspect::Module linked{.section = inspect::CodeSection::executable, .sass = linked_sass};
  linked.kernels = inspect::Kernels::yes;
  inspect::Module relocatable{.section = inspect::CodeSection::relocatable, .sass = rel_sass};
  for (const auto& cc : rel_ptx) relocatable.ptx.push_back({cc, util::Version(9, 0)});
  relocatable.kernels = inspect::Kernels::yes;
  r.modules = {linked, relocatable};
  r.sass.insert(rel_sass.begin(), rel_sass.end());
  r.ptx = rel_ptx;
  return r;
}

// Issue 27: PTX an -rdc build holds only in __nv_relfatbin is not "missing"
// (inspect lists it); it is named so, with the change that puts it in the
// registered module. The runtime JIT-links it, so the set is stored.
TEST(Verify, PlannedPtxOnlyInRelocatableCodeIsNamedSoWithTheFix) {
  const auto v = verify_artifacts(tier_plan(), {rdc_report({{8, 0}, {9, 0}}, {{8, 0}, {9, 0}}, {{9, 0}})});
  EXPECT_TRUE(v.ok()) << v.errors.at(0);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_EQ(v.warnings[0],
            "build/saxpy: planned PTX compute_90 is " + std::string(inspect::relocatable_only_why(true)));
  EXPECT_NE(v.warnings[0].find("only in relocatable device code (__nv_relfatbin, from -rdc)"), std::string::npos);
  EXPECT_NE(v.warnings[0].find("build without separable compilation (no -rdc; CMake: CUDA_SEPARABLE_COMPILATION OFF)"),
            std::string::npos)
      << v.warnings[0];
  EXPECT_EQ(v.warnings[0].find("missing"), std::string::npos) << v.warnings[0];
}

TEST(Verify, PlannedSassOnlyInRelocatableCodeAsksForItInTheDeviceLink) {
  const auto v = verify_artifacts(tier_plan(), {rdc_report({{9, 0}}, {{8, 0}, {9, 0}}, {})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.errors.at(0), "build/saxpy: planned SASS sm_80 is " + std::string(inspect::relocatable_only_why(false)));
  EXPECT_NE(v.errors[0].find("give the device link the same -gencode"), std::string::npos) << v.errors[0];
  // Still missing where no module holds it at all.
  ASSERT_EQ(v.errors.size(), 2u);
  EXPECT_EQ(v.errors[1], "build/saxpy: planned PTX compute_90 is missing");
}

TEST(Verify, UnplannedRelocatableOnlyCodeIsSaidAsSuch) {
  const auto v = verify_artifacts(tier_plan(), {rdc_report({{8, 0}, {9, 0}}, {{7, 5}, {8, 0}, {9, 0}}, {{9, 0}})});
  EXPECT_TRUE(v.ok());
  ASSERT_EQ(v.warnings.size(), 2u);
  EXPECT_EQ(v.warnings[1],
            "build/saxpy: embeds SASS sm_75 (only in relocatable device code, __nv_relfatbin), which the plan did not "
            "ask for");
}

}  // namespace
}  // namespace orc::app
