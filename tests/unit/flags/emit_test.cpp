#include "orchestrator/flags/emit.hpp"

#include <gtest/gtest.h>

#include <map>

namespace orc::flags {
namespace {

using arch::ArchSet;
using arch::ComputeCapability;
using arch::Variant;

ArchSet tier_new() {
  // A100, RTX 3090, RTX 4090, H100 with the production PTX policy.
  return ArchSet{.sass = {{8, 0}, {8, 6}, {8, 9}, {9, 0}}, .ptx = {{9, 0}}};
}

std::map<std::string, std::string> env_of(std::string_view framework, const ArchSet& set, EmitContext context = {}) {
  if (context.cuda.empty()) context.cuda = util::Version(12, 8);
  const Emitter* e = find_emitter(framework);
  EXPECT_NE(e, nullptr) << framework;
  std::map<std::string, std::string> out;
  for (const auto& v : e->emit(set, context).env) out[v.name] = v.value;
  return out;
}

TEST(Emit, TorchArchListMatchesPytorchNotation) {
  EXPECT_EQ(torch_cuda_arch_list(tier_new()), "8.0;8.6;8.9;9.0+PTX");
  EXPECT_EQ(torch_cuda_arch_list(ArchSet{.sass = {{10, 0}, {12, 0}}, .ptx = {{12, 0}}}), "10.0;12.0+PTX");
  EXPECT_EQ(torch_cuda_arch_list(ArchSet{.sass = {{9, 0, Variant::arch_specific}}, .ptx = {}}), "9.0a");
}

TEST(Emit, TensorflowUsesSmForSassOnlyAndComputeForBoth) {
  EXPECT_EQ(tf_compute_capabilities(tier_new()), "sm_80,sm_86,sm_89,compute_90");
}

TEST(Emit, CmakeRealVirtualSuffixes) {
  EXPECT_EQ(cmake_cuda_architectures(tier_new()), "80-real;86-real;89-real;90");
  EXPECT_EQ(cmake_cuda_architectures(ArchSet{.sass = {}, .ptx = {{8, 0}}}), "80-virtual");
  EXPECT_EQ(cmake_cuda_architectures(ArchSet{.sass = {{12, 0}}, .ptx = {{12, 0}}}), "120");
}

TEST(Emit, NvccGencodeOnePerTarget) {
  const std::vector<std::string> expected{
      "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_86,code=sm_86",
      "-gencode=arch=compute_89,code=sm_89", "-gencode=arch=compute_90,code=sm_90",
      "-gencode=arch=compute_90,code=compute_90"};
  EXPECT_EQ(nvcc_gencode(tier_new()), expected);
  EXPECT_EQ(nvcc_gencode(ArchSet{.sass = {{10, 0, Variant::family}}, .ptx = {}}),
            std::vector<std::string>{"-gencode=arch=compute_100f,code=sm_100f"});
}

TEST(Emit, CaffeMakefileCudaArch) {
  EXPECT_EQ(caffe_cuda_arch(ArchSet{.sass = {{7, 5}, {8, 6}}, .ptx = {{8, 6}}}),
            "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code=sm_86 "
            "-gencode arch=compute_86,code=compute_86");
}

TEST(Emit, CaffeCmakeManualAndRescuesArchsItsParserMangles) {
  auto env = env_of("caffe-cmake", tier_new());
  EXPECT_EQ(env["CUDA_ARCH_NAME"], "Manual");
  EXPECT_EQ(env["CUDA_ARCH_BIN"], "80 86 89 90");
  EXPECT_EQ(env["CUDA_ARCH_PTX"], "90");
  EXPECT_FALSE(env.contains("CUDA_NVCC_FLAGS"));

  // 120 contains "20", which Cuda.cmake deletes for CUDA >= 9.
  const ArchSet next{.sass = {{10, 0}, {12, 0}}, .ptx = {{12, 0}}};
  const Emitter* e = find_emitter("caffe-cmake");
  const Emitted emitted = e->emit(next, EmitContext{.cuda = util::Version(12, 8), .cudnn = {}, .framework = {}});
  std::map<std::string, std::string> got;
  for (const auto& v : emitted.env) got[v.name] = v.value;
  EXPECT_EQ(got["CUDA_ARCH_BIN"], "100");
  EXPECT_EQ(got["CUDA_ARCH_PTX"], "");
  EXPECT_EQ(got["CUDA_NVCC_FLAGS"], "-gencode=arch=compute_120,code=sm_120;-gencode=arch=compute_120,code=compute_120");
  ASSERT_EQ(emitted.warnings.size(), 1u);
  EXPECT_NE(emitted.warnings[0].find("120 becomes 1"), std::string::npos);
}

TEST(Emit, TensorflowHermeticFrom218) {
  const EmitContext old{.cuda = util::Version(std::vector<int>{12, 4, 1}), .cudnn = util::Version(9, 1), .framework = util::Version(2, 17)};
  auto env = env_of("tensorflow", tier_new(), old);
  EXPECT_EQ(env["TF_NEED_CUDA"], "1");
  EXPECT_EQ(env["TF_CUDA_VERSION"], "12.4");
  EXPECT_EQ(env["TF_CUDNN_VERSION"], "9");
  EXPECT_FALSE(env.contains("HERMETIC_CUDA_COMPUTE_CAPABILITIES"));
  EmitContext hermetic = old;
  hermetic.framework = util::Version(2, 18);
  env = env_of("tensorflow", tier_new(), hermetic);
  EXPECT_EQ(env["HERMETIC_CUDA_COMPUTE_CAPABILITIES"], "sm_80,sm_86,sm_89,compute_90");
}

TEST(Emit, CmakeAlsoSetsCudaarchs) {
  auto env = env_of("cmake", tier_new());
  EXPECT_EQ(env["CMAKE_CUDA_ARCHITECTURES"], "80-real;86-real;89-real;90");
  EXPECT_EQ(env["CUDAARCHS"], env["CMAKE_CUDA_ARCHITECTURES"]);
}

TEST(Emit, PytorchWarnsOnWhatItsParserRejects) {
  const Emitter* e = find_emitter("pytorch");
  const auto emitted = e->emit(ArchSet{.sass = {{8, 8}, {10, 0, Variant::family}}, .ptx = {}},
                               EmitContext{.cuda = util::Version(13, 0), .cudnn = {}, .framework = {}});
  ASSERT_EQ(emitted.warnings.size(), 2u);
  EXPECT_NE(emitted.warnings[0].find("8.8"), std::string::npos);
  EXPECT_NE(emitted.warnings[1].find("'f' suffix"), std::string::npos);
}

TEST(Emit, NeverEmitsNativeOrAll) {
  for (const auto& e : emitter_table()) {
    for (const auto& v : e.emit(tier_new(), EmitContext{.cuda = util::Version(12, 8), .cudnn = util::Version(9, 8), .framework = {}}).env) {
      EXPECT_EQ(v.value.find("native"), std::string::npos) << e.framework << " " << v.name;
      EXPECT_NE(v.value, "all") << e.framework;
      EXPECT_NE(v.value, "ALL") << e.framework;
    }
  }
  EXPECT_EQ(find_emitter("bazel"), nullptr);
}

}  // namespace
}  // namespace orc::flags
