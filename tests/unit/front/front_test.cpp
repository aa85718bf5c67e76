#include "orchestrator/front/front.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace orc::front {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;
using arch::ComputeCapability;

class TempDir {
 public:
  TempDir()
      : m_path(fs::temp_directory_path() /
               ("orc-front-" + std::to_string(::getpid()) + "-" + std::to_string(s_count++))) {
    fs::create_directories(m_path);
  }
  ~TempDir() { fs::remove_all(m_path); }
  const fs::path& path() const { return m_path; }
  void write(const fs::path& rel, const std::string& text) const {
    fs::create_directories((m_path / rel).parent_path());
    std::ofstream(m_path / rel) << text;
  }

 private:
  static inline int s_count = 0;
  fs::path m_path;
};

FrontConfig config_for(const fs::path& source, Policy policy) {
  FrontConfig c;
  c.real_nvcc = "/usr/local/cuda/bin/nvcc";
  c.plan.sass = {ComputeCapability(8, 0), ComputeCapability(8, 9), ComputeCapability(9, 0)};
  c.plan.ptx = {ComputeCapability(9, 0)};
  c.default_arch = ComputeCapability(7, 5);
  c.policy = policy;
  c.tier = "tier-new";
  c.recipe = "pinned";
  c.recipe_where = "recipes/orchestrate.yaml:40";
  c.source = source;
  c.log = source / "calls.jsonl";
  return c;
}

Decision decide_args(const FrontConfig& c, const Args& args, const fs::path& cwd = "/build") {
  return decide(c, args, read_nvcc_call(args), {.cwd = cwd, .dryrun = {}, .probes = {}});
}

const Args k_plan_flags = {"-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_89,code=sm_89",
                           "-gencode=arch=compute_90,code=sm_90", "-gencode=arch=compute_90,code=compute_90"};

TEST(Front, ThePlansOwnArchsRunAsAsked) {
  TempDir dir;
  Args args = {"-c", "k.cu", "-o", "k.o"};
  args.insert(args.end(), k_plan_flags.begin(), k_plan_flags.end());
  const auto d = decide_args(config_for(dir.path(), Policy::verify), args);
  EXPECT_EQ(d.action, Decision::Action::run_as_asked);
  EXPECT_EQ(d.record.outcome, Outcome::as_planned);
  EXPECT_EQ(describe(*d.record.compiled), "sm_80 sm_89 sm_90 compute_90");
}

TEST(Front, VerifyRefusesAPinnedCmakeListAndNamesTheLine) {
  TempDir dir;
  dir.write("CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CUDA)\n"
            "# set(CMAKE_CUDA_ARCHITECTURES 75 80) in a comment is not it\n"
            "set(CMAKE_CUDA_ARCHITECTURES 75 80 86 87 89 90 100 110 120)\nadd_executable(p k.cu)\n");
  Args args = {"-c", "/src/k.cu", "-o", "k.o"};
  for (const char* a : {"75", "80", "86", "87", "89", "90", "100", "110", "120"})
    args.push_back(std::string("--generate-code=arch=compute_") + a + ",code=[compute_" + a + ",sm_" + a + "]");
  const auto d = decide_args(config_for(dir.path(), Policy::verify), args);
  ASSERT_EQ(d.action, Decision::Action::refuse);
  EXPECT_EQ(d.record.outcome, Outcome::refused);
  ASSERT_TRUE(d.record.origin);
  EXPECT_EQ(d.record.origin->file, "CMakeLists.txt");
  EXPECT_EQ(d.record.origin->line, 4);
  ASSERT_GE(d.message.size(), 4u);
  EXPECT_EQ(d.message[0].substr(0, 39), "orchestrate: error: CMakeLists.txt:4: n");
  const std::string all = [&] {
    std::string s;
    for (const auto& m : d.message) s += m + "\n";
    return s;
  }();
  EXPECT_NE(all.find("not planned sm_75 sm_86 sm_87 sm_100 sm_110 sm_120 compute_75"), std::string::npos) << all;
  EXPECT_NE(all.find("add `nvcc: enforce` to recipe 'pinned' (recipes/orchestrate.yaml:40)"), std::string::npos);
  EXPECT_NE(all.find("if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)"), std::string::npos);
}

TEST(Front, EnforceReplacesTheProjectsArchsWithThePlans) {
  TempDir dir;
  dir.write("Makefile", "NVFLAGS := -O3 -arch=sm_75\nall:\n\tnvcc $(NVFLAGS) -o app app.cu\n");
  const Args args = {"-O3", "-arch=sm_75", "-o", "app", "app.cu"};
  const auto d = decide_args(config_for(dir.path(), Policy::enforce), args);
  ASSERT_EQ(d.action, Decision::Action::run_rewritten);
  Args expected = {"-O3", "-o", "app", "app.cu"};
  expected.insert(expected.end(), k_plan_flags.begin(), k_plan_flags.end());
  EXPECT_EQ(d.argv, expected);
  EXPECT_EQ(d.record.outcome, Outcome::enforced);
  EXPECT_EQ(describe(d.record.asked), "sm_75 compute_75");
  ASSERT_TRUE(d.record.origin);
  EXPECT_EQ(d.record.origin->str(), "Makefile:1: NVFLAGS := -O3 -arch=sm_75");
}

TEST(Front, NoArchOptionIsNvccsDefaultAndAProbeBeforeItIsNamed) {
  TempDir dir;
  dir.write("Makefile", "ARCH := $(shell __nvcc_device_query)\n");
  CallRecord probe{.tool = "__nvcc_device_query", .outcome = Outcome::probe, .note = "exited 1, printing nothing"};
  probe.origin = Origin{.file = "Makefile", .line = 1, .text = "ARCH := $(shell __nvcc_device_query)"};
  const Args args = {"-o", "app", "app.cu"};
  const auto d = decide(config_for(dir.path(), Policy::verify), args, read_nvcc_call(args),
                        {.cwd = dir.path(), .dryrun = {}, .probes = {probe}});
  ASSERT_EQ(d.action, Decision::Action::refuse);
  EXPECT_EQ(describe(d.record.asked), "sm_75 compute_75");
  std::string all;
  for (const auto& m : d.message) all += m + "\n";
  EXPECT_NE(all.find("nvcc's default (sm_75)"), std::string::npos) << all;
  EXPECT_NE(all.find("probed the build machine's GPU first: __nvcc_device_query (Makefile:1) exited 1"),
            std::string::npos)
      << all;
}

TEST(Front, CMakesCompilerChecksAndHostFilesAreNotJudged) {
  TempDir dir;
  const auto probe =
      decide_args(config_for(dir.path(), Policy::verify), {"-c", "CMakeCUDACompilerId.cu", "-arch=sm_52"},
                  "/build/CMakeFiles/3.25.1/CompilerIdCUDA");
  EXPECT_EQ(probe.action, Decision::Action::run_as_asked);
  EXPECT_EQ(probe.record.outcome, Outcome::not_judged);
  EXPECT_EQ(decide_args(config_for(dir.path(), Policy::verify), {"-c", "h.cpp", "-o", "h.o"}).record.outcome,
            Outcome::not_judged);
  EXPECT_EQ(decide_args(config_for(dir.path(), Policy::verify), {"--version"}).action, Decision::Action::run_as_asked);
}

TEST(Front, NativeIsJudgedByWhatNvccSays) {
  TempDir dir;
  const Args args = {"-c", "k.cu", "-arch=native"};
  Targets here;
  here.code.sass = {ComputeCapability(9, 0)};
  here.code.ptx = {ComputeCapability(9, 0)};
  const auto d = decide(config_for(dir.path(), Policy::verify), args, read_nvcc_call(args),
                        {.cwd = "/build", .dryrun = here, .probes = {}});
  EXPECT_EQ(d.action, Decision::Action::refuse);
  EXPECT_EQ(describe(d.record.asked), "sm_90 compute_90");
  EXPECT_NE(d.message[1].find("-arch=native"), std::string::npos);
}

TEST(Front, ConfigRoundTrips) {
  const FrontConfig c = config_for("/src", Policy::enforce);
  auto back = parse_config(render_config(c));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->plan, c.plan);
  EXPECT_EQ(back->policy, Policy::enforce);
  EXPECT_EQ(back->default_arch, c.default_arch);
  EXPECT_EQ(back->recipe_where, c.recipe_where);
  EXPECT_EQ(back->log, c.log);
  EXPECT_FALSE(parse_config("plan=sm_80\n"));
  EXPECT_FALSE(parse_config("real_nvcc=/n\nplan=sm_8x\n"));
}

TEST(Front, CallLogRoundTripsAndSkipsATornLine) {
  CallRecord r{.tool = "nvcc", .kind = CallKind::compile, .choice = ArchChoice::listed};
  r.asked.code.sass = {ComputeCapability(7, 5)};
  r.compiled = Targets{.code = {.sass = {ComputeCapability(8, 0)}, .ptx = {ComputeCapability(9, 0)}}, .lto = {}};
  r.sources = {"k.cu"};
  r.outcome = Outcome::enforced;
  r.origin = Origin{.file = "CMakeLists.txt", .line = 4, .text = "set(CMAKE_CUDA_ARCHITECTURES 75)"};
  r.exit_code = 0;
  const std::string line = to_json_line(r);
  EXPECT_EQ(line.back(), '\n');
  const auto back = read_call_log(line + "{\"tool\":\"nvcc\",\"outc" + "\n" + line);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].outcome, Outcome::enforced);
  EXPECT_EQ(describe(back[0].asked), "sm_75");
  EXPECT_EQ(describe(*back[0].compiled), "sm_80 compute_90");
  EXPECT_EQ(back[0].origin->str(), "CMakeLists.txt:4: set(CMAKE_CUDA_ARCHITECTURES 75)");
  EXPECT_EQ(back[0].exit_code, 0);
  EXPECT_EQ(read_call_log(line + line + line, 2).size(), 2u);
}

}  // namespace
}  // namespace orc::front
