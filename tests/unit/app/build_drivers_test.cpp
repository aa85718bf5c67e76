// Build drivers: what each framework's build runs, and the Caffe and bazel
// state they manage.
#include "orchestrator/app/build/build_drivers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace orc::app {
namespace {

// The CUDA part of Caffe 1.0's Makefile.config.example, as shipped.
constexpr const char* k_caffe_example = R"(# CUDA directory contains bin/ and lib/ directories that we need.
CUDA_DIR := /usr/local/cuda
# On Ubuntu 14.04, if cuda tools are installed via
# "sudo apt-get install nvidia-cuda-toolkit" then use this instead:
# CUDA_DIR := /usr

# CUDA architecture setting: going with all of them.
# For CUDA < 6.0, comment the *_50 through *_61 lines for compatibility.
# For CUDA < 8.0, comment the *_60 and *_61 lines for compatibility.
# For CUDA >= 9.0, comment the *_20 and *_21 lines for compatibility.
CUDA_ARCH := -gencode arch=compute_20,code=sm_20 \
		-gencode arch=compute_20,code=sm_21 \
		-gencode arch=compute_30,code=sm_30 \
		-gencode arch=compute_35,code=sm_35 \
		-gencode arch=compute_50,code=sm_50 \
		-gencode arch=compute_52,code=sm_52 \
		-gencode arch=compute_60,code=sm_60 \
		-gencode arch=compute_61,code=sm_61 \
		-gencode arch=compute_61,code=compute_61

# BLAS choice:
# atlas for ATLAS (default)
BLAS := atlas
)";

TEST(CaffeMakefileConfig, ReplacesTheContinuedCudaArchAssignmentAndCudaDir) {
  const std::string arch = "-gencode arch=compute_70,code=sm_70 -gencode arch=compute_75,code=sm_75";
  const std::string out = rewrite_caffe_makefile_config(k_caffe_example, arch, "/usr");
  EXPECT_NE(out.find("\nCUDA_ARCH := " + arch + "\n\n# BLAS choice:"), std::string::npos) << out;
  EXPECT_EQ(out.find("compute_20"), std::string::npos) << out;
  EXPECT_EQ(out.find("compute_61"), std::string::npos) << out;
  EXPECT_NE(out.find("\nCUDA_DIR := /usr\n"), std::string::npos);
  // Comments stay as written, including the commented-out CUDA_DIR.
  EXPECT_NE(out.find("# CUDA_DIR := /usr\n"), std::string::npos);
  EXPECT_NE(out.find("# For CUDA >= 9.0, comment the *_20 and *_21 lines"), std::string::npos);
  EXPECT_NE(out.find("BLAS := atlas\n"), std::string::npos);
}

TEST(CaffeMakefileConfig, AppendsCudaArchWhenTheExampleHasNone) {
  const std::string out =
      rewrite_caffe_makefile_config("BLAS := open\n", "-gencode arch=compute_80,code=sm_80", "/usr/local/cuda");
  EXPECT_TRUE(out.starts_with("BLAS := open\n"));
  EXPECT_TRUE(out.ends_with("CUDA_ARCH := -gencode arch=compute_80,code=sm_80\n")) << out;
}

TEST(BazelFingerprint, ExpungesOnlyWhenTheArchsChanged) {
  const flags::TensorflowVars old_env{.capabilities = "sm_80,compute_90", .cuda_version = "12.4"};
  const flags::TensorflowVars new_env{.capabilities = "sm_80,sm_90,compute_100", .cuda_version = "12.4"};
  const std::string before = bazel_arch_fingerprint(old_env);
  const std::string after = bazel_arch_fingerprint(new_env);
  EXPECT_NE(before, after);
  EXPECT_FALSE(bazel_expunge_reason(std::nullopt, after)) << "a workspace never configured needs no clean";
  EXPECT_FALSE(bazel_expunge_reason(after, after));
  const auto why = bazel_expunge_reason(before, after);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("sm_80,compute_90"), std::string::npos) << *why;
  EXPECT_NE(why->find("sm_80,sm_90,compute_100"), std::string::npos) << *why;
}

class DriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() /
            ("orc-driver-test-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(m_dir);
    std::filesystem::create_directories(m_dir / "src");
    m_recipe.name = "r";
    m_tier.name = "t";
    m_plan.recipe = &m_recipe;
    m_plan.tier = &m_tier;
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }

  // The plan's framework variables as the emitters make them: typed, with
  // their environment.
  DriverPlan run(recipe::Framework framework, flags::FrameworkVars vars) {
    m_recipe.framework = framework;
    m_plan.framework.env = flags::environment(vars);
    m_plan.framework.vars = std::move(vars);
    DriverInput in{.plan = &m_plan,
                   .recipe = &m_recipe,
                   .place = BuildPlace::container,
                   .cuda_home = "/usr/local/cuda",
                   .jobs = 6,
                   .generator = CmakeGenerator::ninja,
                   .source_dir = m_dir / "src",
                   .workspace = m_dir / "ws"};
    auto out = plan_driver(in);
    EXPECT_TRUE(out) << (out ? "" : out.error());
    return out ? *out : DriverPlan{};
  }
  static std::string env_of(const DriverPlan& p, std::string_view name) {
    for (const auto& [n, v] : p.env)
      if (n == name) return v;
    return "(unset)";
  }

  std::filesystem::path m_dir;
  PlanEntry m_plan;
  recipe::Recipe m_recipe;
  recipe::Tier m_tier;
};

TEST_F(DriverTest, CmakeDefaultsConfigureWithThePlansArchitectures) {
  const auto p = run(recipe::Framework::cmake, flags::CmakeVars{.architectures = "80-real;90"});
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0],
            (std::vector<std::string>{"cmake", "-S", "/src", "-B", "/build", "-G", "Ninja",
                                      "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CUDA_ARCHITECTURES=80-real;90"}));
  EXPECT_EQ(p.steps[1], (std::vector<std::string>{"cmake", "--build", "/build", "-j", "6"}));
  EXPECT_EQ(env_of(p, "CUDAARCHS"), "80-real;90");
  EXPECT_EQ(env_of(p, "CUDA_HOME"), "/usr/local/cuda");
  // The nvcc front first, then the toolkit, then the system: nothing of the caller's PATH.
  EXPECT_EQ(env_of(p, "PATH"),
            "/orc/front/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  EXPECT_EQ(env_of(p, "CUDACXX"), "/orc/front/bin/nvcc");
  EXPECT_EQ(env_of(p, "MAX_JOBS"), "6");
  EXPECT_EQ(env_of(p, "HOME"), "/orc/home");
  EXPECT_EQ(env_of(p, "LANG"), "C");
}

TEST_F(DriverTest, TierAndRecipeEnvComeLastTheRecipesWinning) {
  m_tier.env = {{.name = "USE_NINJA", .value = "0", .where = {}},
                {.name = "PATH", .value = "/opt/py/bin:/usr/bin", .where = {}}};
  m_recipe.env = {{.name = "USE_NINJA", .value = "1", .where = {}}, {.name = "LANG", .value = "C.UTF-8", .where = {}}};
  const auto p = run(recipe::Framework::cmake, flags::CmakeVars{.architectures = "80"});
  EXPECT_EQ(env_of(p, "USE_NINJA"), "1");
  EXPECT_EQ(env_of(p, "LANG"), "C.UTF-8");
  // PATH from env: is the system part, behind the front and the toolkit.
  EXPECT_EQ(env_of(p, "PATH"), "/orc/front/bin:/usr/local/cuda/bin:/opt/py/bin:/usr/bin");
  EXPECT_EQ(std::ranges::count_if(p.env, [](const auto& e) { return e.first == "USE_NINJA"; }), 1);
}

TEST_F(DriverTest, RecipeCmakeStepsGetTheArchsOnConfigureStepsOnly) {
  m_recipe.build = {{.argv = {"cmake", "-S", ".", "-B", "build"}, .script = {}, .where = {}},
                    {.argv = {"cmake", "--build", "build", "--parallel"}, .script = {}, .where = {}}};
  const auto p = run(recipe::Framework::cmake, flags::CmakeVars{.architectures = "100-real;120"});
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].back(), "-DCMAKE_CUDA_ARCHITECTURES=100-real;120");
  EXPECT_EQ(p.steps[1], (std::vector<std::string>{"cmake", "--build", "build", "--parallel"}));
}

TEST_F(DriverTest, CaffeCmakeUsesManualArchCacheVariables) {
  const auto p =
      run(recipe::Framework::caffe_cmake, flags::CaffeCmakeVars{.bin = "60 70 75", .ptx = "", .nvcc_flags = {}});
  ASSERT_EQ(p.steps.size(), 2u);
  const auto& configure = p.steps[0];
  for (const char* arg : {"-DCUDA_ARCH_NAME=Manual", "-DCUDA_ARCH_BIN=60 70 75", "-DCUDA_ARCH_PTX="})
    EXPECT_NE(std::ranges::find(configure, arg), configure.end()) << arg;
}

TEST_F(DriverTest, PytorchBuildsAWheelWithTheArchList) {
  const auto p = run(recipe::Framework::pytorch, flags::TorchVars{.arch_list = "8.0;9.0+PTX"});
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0], (std::vector<std::string>{"python3", "setup.py", "bdist_wheel"}));
  EXPECT_EQ(env_of(p, "TORCH_CUDA_ARCH_LIST"), "8.0;9.0+PTX");
  EXPECT_EQ(env_of(p, "MAX_JOBS"), "6");
}

TEST_F(DriverTest, NvccNeedsTheRecipesStepsAndPassesGencodeThroughTheEnvironment) {
  m_recipe.framework = recipe::Framework::nvcc;
  m_plan.framework.vars = flags::NvccVars{};
  DriverInput in{.plan = &m_plan, .recipe = &m_recipe, .jobs = 1};
  EXPECT_FALSE(plan_driver(in));
  m_recipe.build = {{.argv = {"nvcc", "-o", "k", "k.cu"}, .script = {}, .where = {}}};
  const auto p = run(recipe::Framework::nvcc, flags::NvccVars{.append_flags = "-gencode=arch=compute_80,code=sm_80"});
  EXPECT_EQ(p.steps, (std::vector<std::vector<std::string>>{{"nvcc", "-o", "k", "k.cu"}}));
  EXPECT_EQ(env_of(p, "NVCC_APPEND_FLAGS"), "-gencode=arch=compute_80,code=sm_80");
}

TEST_F(DriverTest, ScriptStepsAreMountedReadOnlyAndRunByBash) {
  std::ofstream(m_dir / "build.sh") << "make\n";
  m_recipe.build = {{.argv = {}, .script = m_dir / "build.sh", .where = {}}};
  const auto p = run(recipe::Framework::pytorch, flags::TorchVars{});
  ASSERT_EQ(p.mounts.size(), 1u);
  EXPECT_EQ(p.mounts[0].container, "/orc/steps/build.sh");
  EXPECT_EQ(p.mounts[0].access, engine::Access::read_only);
  EXPECT_EQ(p.steps, (std::vector<std::vector<std::string>>{{"bash", "/orc/steps/build.sh"}}));
}

TEST_F(DriverTest, CaffeWritesMakefileConfigFromTheExample) {
  std::ofstream(m_dir / "src" / "Makefile.config.example") << k_caffe_example;
  const auto p = run(recipe::Framework::caffe, flags::CaffeVars{.cuda_arch = "-gencode arch=compute_80,code=sm_80"});
  ASSERT_EQ(p.files.size(), 1u);
  EXPECT_EQ(p.files[0].relative, "Makefile.config");
  EXPECT_NE(p.files[0].text.find("CUDA_ARCH := -gencode arch=compute_80,code=sm_80\n"), std::string::npos);
  EXPECT_EQ(p.steps, (std::vector<std::vector<std::string>>{{"make", "-j6", "all"}}));
}

TEST_F(DriverTest, TensorflowExpungesWhenTheWorkspaceWasConfiguredForOtherArchs) {
  const flags::TensorflowVars env{.capabilities = "sm_80,compute_90"};
  const auto first = run(recipe::Framework::tensorflow, env);
  EXPECT_TRUE(first.pre_steps.empty());
  ASSERT_TRUE(first.bazel_fingerprint);
  std::filesystem::create_directories(m_dir / "ws");
  std::ofstream(m_dir / "ws" / std::string(k_bazel_fingerprint_file)) << *first.bazel_fingerprint << "\n";
  EXPECT_TRUE(run(recipe::Framework::tensorflow, env).pre_steps.empty()) << "same archs: bazel's cache is still right";
  const auto changed =
      run(recipe::Framework::tensorflow, flags::TensorflowVars{.capabilities = "sm_80,sm_90,compute_100"});
  EXPECT_EQ(changed.pre_steps, (std::vector<std::vector<std::string>>{{"bazel", "clean", "--expunge"}}));
  EXPECT_TRUE(std::ranges::any_of(changed.notes,
                                  [](const std::string& n) { return n.find("clean --expunge") != std::string::npos; }));
}

// The workspace's .bazelrc keeps its lines and gets the plan's variables
// after them, for `build` and for `build:cuda` (whose expansion comes after
// every plain `build` line and would otherwise win).
TEST_F(DriverTest, TensorflowAppendsThePlansVariablesToTheWorkspacesBazelrc) {
  std::filesystem::create_directories(m_dir / "src");
  std::ofstream(m_dir / "src" / ".bazelrc") << "build:cuda --repo_env=HERMETIC_CUDA_VERSION=\"12.5.1\"\n";
  const auto p = run(recipe::Framework::tensorflow, flags::TensorflowVars{.capabilities = "sm_80,compute_90",
                                                                          .cuda_version = "12.4",
                                                                          .cudnn_version = "9",
                                                                          .hermetic = true,
                                                                          .hermetic_cuda_version = "12.4.1",
                                                                          .hermetic_cudnn_version = "9.1.1"});
  const auto rc = std::ranges::find(p.files, std::filesystem::path(".bazelrc"), &FileToWrite::relative);
  ASSERT_NE(rc, p.files.end());
  EXPECT_TRUE(rc->text.starts_with("build:cuda --repo_env=HERMETIC_CUDA_VERSION=\"12.5.1\"\n")) << rc->text;
  for (const char* line :
       {"\nbuild --repo_env=HERMETIC_CUDA_VERSION=12.4.1\n", "\nbuild:cuda --repo_env=HERMETIC_CUDA_VERSION=12.4.1\n",
        "\nbuild:cuda --repo_env=HERMETIC_CUDNN_VERSION=9.1.1\n",
        "\nbuild:cuda --repo_env=TF_CUDA_COMPUTE_CAPABILITIES=sm_80,compute_90\n",
        "\nbuild:cuda --repo_env=HERMETIC_CUDA_COMPUTE_CAPABILITIES=sm_80,compute_90\n"})
    EXPECT_NE(rc->text.find(line), std::string::npos) << line << " not in\n" << rc->text;
  EXPECT_EQ(rc->text.find("TF_NEED_CUDA"), std::string::npos);
}

}  // namespace
}  // namespace orc::app
