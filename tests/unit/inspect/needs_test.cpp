// What a set needs to start: CUDA libraries named by soname (one table for
// the bill of materials and the needs), the dynamic section read with its
// damage said, and a set's needs over real files: the CUDA 13.0 libraries
// in /usr/local/cuda/lib64 and an nvcc-built program linking cuBLAS.
#include "orchestrator/inspect/needs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/util/process.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"

namespace orc::inspect {
namespace {

namespace fs = std::filesystem;
using testing::Buffer;
using testing::ByteWriter;

TEST(CudaLibraries, SonamesNameTheLibraryAndTheMajorANodeNeeds) {
  const struct {
    std::string_view soname, key;
    std::optional<int> major;
  } cases[] = {
      {"libcublas.so.13", "cublas", 13},
      {"libcublasLt.so.12", "cublaslt", 12},
      {"libcudart.so.11.0", "cudart", 11},
      {"libcudnn.so.9", "cudnn", 9},
      {"libcudnn_ops_infer.so.8", "cudnn", 8},
      {"libcudnn_graph.so.9", "cudnn", 9},
      {"libnccl.so.2", "nccl", 2},
      {"libcufft.so.12", "cufft", 12},
      {"libcufftw.so.12", "cufftw", 12},
      {"libnppif.so.13", "npp", 13},
      {"libnppc.so.12", "npp", 12},
      {"libnvjpeg.so.13", "nvjpeg", 13},
      {"libnvJitLink.so.13", "nvjitlink", 13},
      {"libcusparseLt.so.0", "cusparselt", 0},
      {"libcusolverMg.so.12", "cusolvermg", 12},
      {"libcuda.so.1", "libcuda", 1},
      {"libcublas.so", "cublas", std::nullopt},
  };
  for (const auto& c : cases) {
    const auto l = classify_soname(c.soname);
    ASSERT_TRUE(l) << c.soname;
    EXPECT_EQ(l->library->key, c.key) << c.soname;
    EXPECT_EQ(l->major, c.major) << c.soname;
    EXPECT_EQ(l->soname, c.soname);
  }
  for (std::string_view other : {"libc.so.6", "libstdc++.so.6", "libcublasX.so.13", "libcublas.so.x", "libcu.so.1",
                                 "libnvidia-glcore.so.580", "libcublas.so.13a", ""})
    EXPECT_FALSE(classify_soname(other)) << other;
  EXPECT_EQ(describe(*classify_soname("libcublas.so.13")), "cuBLAS 13");
  EXPECT_EQ(describe_need(*classify_soname("libcudart.so.12")), "CUDA runtime 12 (libcudart.so.12)");
  EXPECT_EQ(cuda_library_of_stem("libcudnn_adv.so")->key, "cudnn");
  EXPECT_EQ(cuda_library_of_stem("libcuda.so")->provider, Provider::driver);
}

// A dynamic section: entries {tag, value} of the class's width, names in
// the linked string table.
Buffer dynamic_elf(bool is64, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& entries,
                   std::uint32_t link = 1, std::size_t cut = 0) {
  ByteWriter strings;
  strings.u8(0).text("libcublas.so.13").u8(0).text("libc.so.6").u8(0).text("libx.so.1").u8(0);
  ByteWriter table;
  for (const auto& [tag, value] : entries) {
    if (is64)
      table.u64(tag).u64(value);
    else
      table.u32(tag).u32(value);
  }
  Buffer bytes = table.data();
  bytes.resize(bytes.size() - cut);
  return testing::build_elf({.is64 = is64,
                             .sections = {{.name = ".dynstr", .type = 3, .data = strings.data()},
                                          {.name = ".dynamic", .type = 6, .data = bytes, .link = link}}});
}

constexpr std::uint64_t k_needed = 1, k_soname = 14;

DynamicInfo dynamic_of(const Buffer& data) {
  const auto elf = parse_elf(data);
  EXPECT_TRUE(elf);
  return elf ? read_dynamic(data, *elf) : DynamicInfo{};
}

TEST(Dynamic, NeededAndSonameOfBothClasses) {
  for (const bool is64 : {true, false}) {
    // 1: "libcublas.so.13", 17: "libc.so.6", 27: "libx.so.1"; 15 (DT_RUNPATH) is skipped.
    const auto d = dynamic_of(dynamic_elf(is64, {{k_needed, 1}, {15, 17}, {k_needed, 17}, {k_soname, 27}, {0, 0}}));
    EXPECT_EQ(d.needed, (std::vector<std::string>{"libcublas.so.13", "libc.so.6"}));
    EXPECT_EQ(d.soname, "libx.so.1");
    EXPECT_FALSE(d.damage) << d.damage->what;
  }
  // Entries after DT_NULL are padding, whatever they hold.
  EXPECT_EQ(dynamic_of(dynamic_elf(true, {{k_needed, 17}, {0, 0}, {k_needed, 999}})).needed,
            std::vector<std::string>{"libc.so.6"});
}

TEST(Dynamic, NoDynamicSectionIsNoNeedAndNoDamage) {
  const auto d = dynamic_of(testing::build_elf({.sections = {{.name = ".text", .data = Buffer(8)}}}));
  EXPECT_TRUE(d.needed.empty());
  EXPECT_TRUE(d.soname.empty());
  EXPECT_FALSE(d.damage);
}

TEST(Dynamic, DamageIsSaidWithWhatCameBeforeIt) {
  // A name past the string table (37 bytes): the entry before it stays.
  auto d = dynamic_of(dynamic_elf(true, {{k_needed, 1}, {k_needed, 4000}, {0, 0}}));
  EXPECT_EQ(d.needed, std::vector<std::string>{"libcublas.so.13"});
  ASSERT_TRUE(d.damage);
  EXPECT_EQ(d.damage->what, "DT_NEEDED name at 4000 is not a string of the string table (37 bytes)");
  // Linked to itself (section 2, the dynamic section) rather than a string table.
  d = dynamic_of(dynamic_elf(true, {{k_needed, 1}, {0, 0}}, 2));
  EXPECT_TRUE(d.needed.empty());
  ASSERT_TRUE(d.damage);
  EXPECT_EQ(d.damage->what, "dynamic section links to section 2, which is no string table");
  d = dynamic_of(dynamic_elf(false, {{k_needed, 1}, {k_needed, 17}}, 1, 3));
  EXPECT_EQ(d.needed, std::vector<std::string>{"libcublas.so.13"});
  ASSERT_TRUE(d.damage);
  EXPECT_EQ(d.damage->what, "dynamic section ends inside an entry (13 bytes, entries of 8)");
  // The damage is the file's, at the entry's offset.
  const Buffer data = dynamic_elf(true, {{k_needed, 1}, {k_soname, 500}});
  const auto elf = parse_elf(data);
  ASSERT_TRUE(elf);
  EXPECT_EQ(read_dynamic(data, *elf).damage->offset, elf->find(".dynamic")->offset + 16);
}

FileReport linking(std::string path, std::vector<std::string> needed, std::string soname = {}) {
  return FileReport{.path = std::move(path), .needed = std::move(needed), .soname = std::move(soname)};
}

TEST(Needs, ASetNeedsWhatItLinksAndDoesNotCarry) {
  const std::vector<FileReport> set = {
      linking("bin/app", {"libcublas.so.13", "libcudart.so.13", "libcuda.so.1", "libc.so.6"}),
      linking("lib/libcudart.so.13.0.96", {"libc.so.6"}, "libcudart.so.13"),
      linking("lib/libk.so", {"libcublasLt.so.13", "libcublas.so.13"}),
  };
  const auto needs = set_needs(set);
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[0].library.soname, "libcublas.so.13");
  EXPECT_EQ(needs[0].files, (std::vector<std::string>{"bin/app", "lib/libk.so"}));
  EXPECT_EQ(needs[1].library.soname, "libcublasLt.so.13");
  EXPECT_EQ(needs[1].files, std::vector<std::string>{"lib/libk.so"});
  // The runtime is carried (by DT_SONAME), the driver's library never a need.
  const auto carried = carried_sonames(set);
  EXPECT_TRUE(unmet_needs(set[1], carried).empty());
  EXPECT_EQ(unmet_needs(set[0], carried).size(), 1u);
  EXPECT_EQ(cuda_links(set[0]).size(), 3u);
  // Carried by its base name too, and members count: a wheel's library
  // needs what the wheel does not carry.
  FileReport wheel{.path = "dist/k.whl"};
  wheel.members = {linking("dist/k.whl!/k/lib/libk.so", {"libcufft.so.12", "libcublas.so.13"}),
                   linking("dist/k.whl!/k/lib/libcublas.so.13", {"libcublasLt.so.13"})};
  const auto wheel_needs = set_needs({wheel});
  ASSERT_EQ(wheel_needs.size(), 2u);
  EXPECT_EQ(wheel_needs[0].library.soname, "libcublasLt.so.13");
  EXPECT_EQ(wheel_needs[1].library.soname, "libcufft.so.12");
  EXPECT_EQ(wheel_needs[1].files, std::vector<std::string>{"dist/k.whl"});
}

constexpr const char* k_lib64 = "/usr/local/cuda/lib64";

// CUDA 13.0's own libraries: cuSOLVER 12 links nvJitLink, cuSPARSE, cuBLAS
// and cuBLASLt of CUDA 13; a set of it and cuBLAS still needs the rest.
TEST(Needs, RealCudaLibraries) {
  const fs::path cusolver = fs::path(k_lib64) / "libcusolver.so.12", cublas = fs::path(k_lib64) / "libcublas.so.13";
  if (!fs::exists(cusolver) || !fs::exists(cublas)) GTEST_SKIP() << "CUDA 13.0's libraries are not in " << k_lib64;
  const auto reports = inspect_files({cusolver, cublas}, {});
  EXPECT_EQ(reports[0].soname, "libcusolver.so.12");
  EXPECT_EQ(reports[1].soname, "libcublas.so.13");
  EXPECT_FALSE(reports[0].damage);
  std::vector<std::string> needed;
  for (const auto& n : set_needs(reports)) needed.push_back(describe_need(n.library));
  EXPECT_EQ(needed, (std::vector<std::string>{"cuBLASLt 13 (libcublasLt.so.13)", "cuSPARSE 12 (libcusparse.so.12)",
                                              "nvJitLink 13 (libnvJitLink.so.13)"}));
}

// A program nvcc links against cuBLAS (and the shared runtime) needs both;
// with the runtime copied beside it, cuBLAS alone.
TEST(Needs, NvccProgramLinkingCublas) {
  const fs::path nvcc = "/usr/local/cuda/bin/nvcc";
  if (!fs::exists(nvcc)) GTEST_SKIP() << nvcc << " not found (CUDA 13.0 not installed)";
  const fs::path dir = fs::temp_directory_path() / ("orc-needs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "gemm.cu") << "#include <cublas_v2.h>\n"
                                    "__global__ void k(float* a) { a[threadIdx.x] = 1; }\n"
                                    "int main() { cublasHandle_t h; k<<<1, 1>>>(nullptr); return cublasCreate(&h); }\n";
  const auto built = util::run_process({.argv = {nvcc.string(), "-arch=sm_80", "-cudart", "shared", "-o",
                                                 (dir / "gemm").string(), (dir / "gemm.cu").string(), "-lcublas"},
                                        .merge_stderr = true});
  ASSERT_TRUE(built && built->ok()) << (built ? built->out : built.error().message);
  fs::copy_file(fs::path(k_lib64) / "libcudart.so.13", dir / "libcudart.so.13");

  auto reports = inspect_files({dir / "gemm"}, {.modules = true});
  auto needs = set_needs(reports);
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(describe_need(needs[0].library), "CUDA runtime 13 (libcudart.so.13)");
  EXPECT_EQ(describe_need(needs[1].library), "cuBLAS 13 (libcublas.so.13)");
  EXPECT_EQ(needs[1].files, std::vector<std::string>{(dir / "gemm").string()});

  reports = inspect_files({dir / "gemm", dir / "libcudart.so.13"}, {});
  needs = set_needs(reports);
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].library.library->key, "cublas");
  EXPECT_EQ(needs[0].library.major, 13);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orc::inspect
