// Real nvcc-built inputs (CUDA 13.0 at /usr/local/cuda, else $ORC_NVCC); the
// tests skip with the reason where there is none.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "orchestrator/smoke/artifact.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/process.hpp"

namespace orc::smoke {
namespace {

namespace fs = std::filesystem;
using arch::ComputeCapability;

std::string nvcc() { return std::getenv("ORC_NVCC") ? std::getenv("ORC_NVCC") : "/usr/local/cuda/bin/nvcc"; }

class ArtifactTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(nvcc().c_str(), X_OK) != 0) GTEST_SKIP() << "no nvcc at " << nvcc();
    m_dir = fs::temp_directory_path() / ("orc-smoke-artifact-" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
    std::ofstream(m_dir / "k.cu") << "__global__ void add(float* a) { a[threadIdx.x] += 1; }\n"
                                     "void launch(float* a) { add<<<1, 1>>>(a); }\n";
  }
  void TearDown() override { fs::remove_all(m_dir); }
  void sh(const std::string& command) {
    const auto ran = util::run_process({.argv = {"sh", "-c", command}, .working_dir = m_dir, .merge_stderr = true});
    ASSERT_TRUE(ran && ran->ok()) << command << "\n" << (ran ? ran->out : ran.error().message);
  }
  std::vector<EmbeddedFatbin> found(const fs::path& file) {
    std::vector<EmbeddedFatbin> all;
    for_each_fatbin(file, [&](const EmbeddedFatbin& f) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.bytes.data()) % 8, 0u);
      EXPECT_EQ(static_cast<unsigned char>(f.bytes[0]), 0x50);  // fatbin magic 0xBA55ED50, little-endian
      all.push_back(f);
      all.back().bytes = {};
    });
    return all;
  }
  fs::path m_dir;
};

TEST_F(ArtifactTest, SharedObjectArchiveAndFatbinEachYieldTheirContainer) {
  const std::string gencode = " -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90";
  sh(nvcc() + " -shared -Xcompiler -fPIC" + gencode + " -o libk.so k.cu");
  sh(nvcc() + " -c -Xcompiler -fPIC" + gencode + " -o k.o k.cu && ar rcs libk.a k.o");
  sh(nvcc() + " -fatbin" + gencode + " -o k.fatbin k.cu");
  for (const char* name : {"libk.so", "libk.a", "k.fatbin"}) {
    SCOPED_TRACE(name);
    const auto images = found(m_dir / name);
    // The .so also links a container of cudart_static's own (sm_80 only):
    // cuobjdump lists two cubins for it, as inspect does.
    ASSERT_EQ(images.size(), std::string_view(name) == "libk.so" ? 2u : 1u);
    EXPECT_EQ(images.back().sass, (std::set<ComputeCapability>{{8, 0}}));
    EXPECT_EQ(images.back().ptx, (std::set<ComputeCapability>{{9, 0}}));
  }
  EXPECT_TRUE(found(m_dir / "libk.so")[1].where.ends_with("libk.so .nv_fatbin[1]"));
  EXPECT_TRUE(found(m_dir / "libk.a")[0].where.ends_with("libk.a:k.o .nv_fatbin[0]"));
}

TEST_F(ArtifactTest, HostOnlyFileHasNothingAndMissingFileIsBadInput) {
  std::ofstream(m_dir / "plain.txt") << "no device code";
  EXPECT_TRUE(found(m_dir / "plain.txt").empty());
  try {
    for_each_fatbin(m_dir / "missing.so", [](const EmbeddedFatbin&) {});
    FAIL() << "no exception";
  } catch (const util::Failure& f) {
    EXPECT_EQ(f.code(), util::ExitCode::bad_input);
  }
}

// Every kernel compiles for every tier's arch (issue 6), and the fatbin
// holds exactly those cubins.
TEST_F(ArtifactTest, SmokeKernelsCompileForEveryArch) {
  std::string gencode;
  std::set<ComputeCapability> want;
  for (int sm : {75, 80, 89, 90, 100, 120}) {
    gencode += " -gencode arch=compute_" + std::to_string(sm) + ",code=sm_" + std::to_string(sm);
    want.insert({sm / 10, sm % 10});
  }
  sh(nvcc() + " -fatbin -O3" + gencode + " -o kernels.fatbin " ORC_SOURCE_DIR "/kernels/smoke_kernels.cu 2>&1");
  const auto images = found(m_dir / "kernels.fatbin");
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0].sass, want);
}

}  // namespace
}  // namespace orc::smoke
