// What a set needs to start, end to end on this host: a program nvcc 13.0
// builds against cuBLAS and the shared CUDA runtime is stored with both as
// needs in its manifest; the build report says so (text and --json), a hit
// says it again from the manifest, and `k8s render` names them on the smoke
// Job whose image must provide them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/cluster/k8s.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_cuda = "/usr/local/cuda";

class BuildNeeds : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access((std::string(k_cuda) + "/bin/nvcc").c_str(), X_OK) != 0)
      GTEST_SKIP() << "no CUDA 13.0 toolkit at " << k_cuda;
    m_dir = fs::temp_directory_path() / ("orc-build-needs-unit-" + std::to_string(::getpid()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir / "src");
    ::setenv("ORCHESTRATE_HOST_TOOLKITS", k_cuda, 1);
    ::setenv("ORCHESTRATE_HOST_CUDA", k_cuda, 1);
    ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir / "keys").c_str(), 1);
    std::ofstream(m_dir / "src" / "gemm.cu")
        << "#include <cublas_v2.h>\n__global__ void k(float* a) { a[threadIdx.x] = 1; }\n"
        << "int main() { cublasHandle_t h; k<<<1, 1>>>(nullptr); return cublasCreate(&h); }\n";
    std::ofstream(m_dir / "orchestrate.yaml") << "toolkits: [\"13.0\"]\n"
                                              << "tiers:\n  tier-h:\n    gpus: [H100]\n"
                                              << "recipes:\n  - name: gemm\n    framework: nvcc\n"
                                              << "    source: {path: src}\n    tiers: [tier-h]\n"
                                              << "    build: [[nvcc, -cudart, shared, -o, gemm, gemm.cu, -lcublas]]\n"
                                              << "    artifacts: [gemm]\n";
  }
  void TearDown() override {
    for (const char* name : {"ORCHESTRATE_HOST_TOOLKITS", "ORCHESTRATE_HOST_CUDA", "ORCHESTRATE_KEYS_DIR"})
      ::unsetenv(name);
    if (!m_dir.empty()) fs::remove_all(m_dir);
  }
  BuildReport run() {
    std::ostringstream progress;
    BuildReport report = build(BuildRequest{.config = m_dir / "orchestrate.yaml",
                                            .tiers = {"tier-h"},
                                            .recipes = {},
                                            .engine = engine::EngineKind::host,
                                            .jobs = 1,
                                            .explain = false,
                                            .store_root = m_dir / "store"},
                               progress);
    EXPECT_EQ(report.builds.size(), 1u);
    EXPECT_EQ(report.exit_code(), util::ExitCode::ok) << progress.str() << cli::render_build_errors(report);
    return report;
  }
  fs::path m_dir;
};

std::vector<std::string> sonames(const BuiltArtifact& a) {
  std::vector<std::string> out;
  for (const auto& n : a.needs) out.push_back(n.soname + "=" + n.library + ":" + std::to_string(n.major.value_or(-1)));
  return out;
}

TEST_F(BuildNeeds, TheSetTheReportAndTheSmokeJobSayWhatTheNodesMustProvide) {
  const BuildReport built = run();
  ASSERT_EQ(built.builds.size(), 1u);
  const BuildResult& b = built.builds[0];
  ASSERT_EQ(b.status, BuildStatus::built);
  ASSERT_EQ(b.artifacts.size(), 1u);
  EXPECT_EQ(sonames(b.artifacts[0]),
            (std::vector<std::string>{"libcudart.so.13=cudart:13", "libcublas.so.13=cublas:13"}));

  // The manifest stored them, typed.
  auto store = cache::Store::open(m_dir / "store");
  ASSERT_TRUE(store);
  const auto manifest = cache::parse_manifest(store->read_blob(*b.manifest).value());
  ASSERT_TRUE(manifest);
  ASSERT_EQ(manifest->files.size(), 1u);
  EXPECT_EQ(manifest->files[0].needs,
            (std::vector<cache::LibraryNeed>{{.library = "cublas", .major = 13, .soname = "libcublas.so.13"},
                                             {.library = "cudart", .major = 13, .soname = "libcudart.so.13"}}));

  // The report: a line per library under the artifact, typed in --json.
  const std::string text = cli::render_build_text(built, false);
  EXPECT_NE(text.find("\n      needs CUDA runtime 13 (libcudart.so.13), not in the set\n"
                      "      needs cuBLAS 13 (libcublas.so.13), not in the set\n"),
            std::string::npos)
      << text;
  for (const auto& line : util::split_any(text, "\n")) EXPECT_LT(line.size(), 100u) << line;
  const auto json = nlohmann::json::parse(cli::render_build_json(built));
  const auto& needs = json["builds"][0]["artifacts"][0]["needs"];
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[1],
            (nlohmann::json{{"library", "cublas"}, {"major", 13}, {"soname", "libcublas.so.13"}, {"name", "cuBLAS"}}));

  // A hit says the same, from the manifest.
  const BuildReport hit = run();
  ASSERT_EQ(hit.builds[0].status, BuildStatus::cached);
  ASSERT_EQ(hit.builds[0].artifacts.size(), 1u);
  EXPECT_EQ(sonames(hit.builds[0].artifacts[0]), sonames(b.artifacts[0]));

  // The smoke Job: an annotation, and a note that its image must provide
  // them (smoke Jobs only: the build Job would need the source shipped).
  const K8sRender render = k8s_render({.config = m_dir / "orchestrate.yaml",
                                       .tier = "tier-h",
                                       .recipes = {},
                                       .store_root = m_dir / "store",
                                       .tool_image = "registry.local/orchestrate:1",
                                       .only = K8sOnly::smoke});
  const auto smoke = std::ranges::find(render.jobs, std::string("smoke"), &K8sJob::work);
  ASSERT_NE(smoke, render.jobs.end()) << render.yaml;
  EXPECT_EQ(smoke->needs.size(), 2u);
  EXPECT_NE(render.yaml.find("orchestrate.dev/needs: libcudart.so.13 libcublas.so.13"), std::string::npos)
      << render.yaml;
  EXPECT_NE(render.yaml.find("# smoke gemm/tier-h: the set needs cuBLAS 13 (libcublas.so.13), which it does not "
                             "carry;\n#   registry.local/orchestrate:1 must provide it\n"),
            std::string::npos)
      << render.yaml;
  EXPECT_EQ(std::ranges::find(render.jobs, std::string("build"), &K8sJob::work), render.jobs.end());
}

}  // namespace
}  // namespace orc::app
