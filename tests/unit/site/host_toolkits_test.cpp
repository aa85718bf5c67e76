#include "orchestrator/site/host_toolkits.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace orc::site {
namespace {

namespace fs = std::filesystem;
using compat::ToolkitPart;

void touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "x";
}

// Debian's layout as the install script leaves it: bin/nvcc, include and
// lib64 as links into usr/; layout 2 had no shared cudart and no libcu++.
fs::path debian_tree(const fs::path& dir, bool complete) {
  const fs::path root = dir / "cuda-12.4";
  touch(root / "bin" / "nvcc");
  touch(root / "usr/include/cuda_runtime.h");
  touch(root / "usr/include/cublas_v2.h");
  const fs::path lib = root / "usr/lib/x86_64-linux-gnu";
  touch(lib / "libcudart_static.a");
  fs::create_directory_symlink("usr/include", root / "include");
  fs::create_directory_symlink("usr/lib/x86_64-linux-gnu", root / "lib64");
  if (complete) {
    touch(lib / "libcudart.so.12");
    fs::create_symlink("libcudart.so.12", lib / "libcudart.so");
    touch(root / "usr/include/cuda/std/type_traits");
    touch(lib / "libcublas.so.12");
    fs::create_symlink("libcublas.so.12", lib / "libcublas.so");
    touch(lib / "libcublasLt.so");
    touch(root / "usr/include/cublasLt.h");
  } else {
    // nvidia-cuda-dev's development link without the library package.
    fs::create_symlink("libcublas.so.12", lib / "libcublas.so");
  }
  return root;
}

class HostToolkits : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "orc-host-toolkits-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    m_dir = pattern;
  }
  void TearDown() override { fs::remove_all(m_dir); }

  // A toolkit root whose nvcc prints what a real one does.
  fs::path toolkit(const fs::path& root, const std::string& version, int exit_code = 0) {
    fs::create_directories(root / "bin");
    std::ofstream(root / "bin" / "nvcc") << "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                                         << "echo 'Cuda compilation tools, release " << version.substr(0, 4) << ", V"
                                         << version << "'\nexit " << exit_code << "\n";
    fs::permissions(root / "bin" / "nvcc", fs::perms::owner_all);
    return root;
  }

  fs::path m_dir;
};

TEST_F(HostToolkits, FindsListedRootsFoldersOfThemPathAndVersionedFoldersOnceEach) {
  const fs::path a = toolkit(m_dir / "toolchains" / "cuda-11.8", "11.8.89");
  toolkit(m_dir / "toolchains" / "cuda-12.4", "12.4.131");
  const fs::path c = toolkit(m_dir / "usr-local" / "cuda-13.0", "13.0.88");
  fs::create_directory_symlink(c, m_dir / "usr-local" / "cuda");
  // Not a toolkit folder name; and a broken nvcc that is left out.
  toolkit(m_dir / "usr-local" / "other-12.8", "12.8.61");
  toolkit(m_dir / "usr-local" / "cuda-12.6", "12.6.20", 1);

  site::HostToolkitSearch search;
  search.listed = {m_dir / "toolchains", a};  // a twice: a folder of roots, then itself
  search.path_dirs = {m_dir / "nowhere", m_dir / "usr-local" / "cuda" / "bin"};
  search.default_root = m_dir / "usr-local" / "cuda";
  search.versioned_parent = m_dir / "usr-local";
  const auto found = site::discover_host_toolkits(search);

  ASSERT_EQ(found.size(), 3u) << site::describe_host_toolkits(found);
  EXPECT_EQ(found[0].version.str(), "13.0.88");
  EXPECT_EQ(found[0].root, fs::canonical(c)) << "the symlink and cuda-13.0 are one toolkit";
  EXPECT_EQ(found[0].found_by, "PATH");
  EXPECT_EQ(found[1].version.str(), "12.4.131");
  EXPECT_EQ(found[1].found_by, "ORCHESTRATE_HOST_TOOLKITS");
  EXPECT_EQ(found[2].version.str(), "11.8.89");

  const auto twelve = site::find_host_toolkit(found, *util::Version::parse("12.4"));
  ASSERT_TRUE(twelve.has_value());
  EXPECT_EQ(twelve->root, fs::canonical(m_dir / "toolchains" / "cuda-12.4"));
  EXPECT_FALSE(site::find_host_toolkit(found, *util::Version::parse("12.8")).has_value());
  EXPECT_EQ(site::describe_host_toolkits({}), "none");
  EXPECT_EQ(site::describe_host_toolkits({found[2]}), "11.8.89 (" + found[2].root.string() + ")");
}

TEST_F(HostToolkits, TheEnvironmentListIsColonSeparated) {
  ::setenv("ORCHESTRATE_HOST_TOOLKITS", "/a/cuda-11.8::/b", 1);
  ::setenv("ORCHESTRATE_HOST_CUDA", "/opt/cuda", 1);
  const auto search = site::host_toolkit_search_from_environment();
  ::unsetenv("ORCHESTRATE_HOST_TOOLKITS");
  ::unsetenv("ORCHESTRATE_HOST_CUDA");
  EXPECT_EQ(search.listed, (std::vector<fs::path>{"/a/cuda-11.8", "/b"}));
  EXPECT_EQ(search.default_root, fs::path("/opt/cuda"));
  EXPECT_EQ(search.versioned_parent, fs::path("/usr/local"));
}

// What a toolkit tree lacks, from its layout alone: trees shaped as Debian's
// packages unpack (scripts/install-cuda-toolkits.sh, layouts 2 and 3) and as
// NVIDIA's 13.0 installs (headers under targets/, libcu++ under cccl/).
TEST_F(HostToolkits, TheOldUnpackedToolkitsLackTheSharedRuntimeAndLibcudacxx) {
  const auto inventory = inspect_toolkit_tree(debian_tree(m_dir, false));
  EXPECT_FALSE(inventory.complete());
  EXPECT_EQ(compat::describe_missing(inventory.lacking(compat::parts_needed({}))),
            "the shared CUDA runtime (libcudart.so), libcu++ (cuda/std/type_traits)");
  EXPECT_TRUE(inventory.lacks(ToolkitPart::cublas)) << "a link that points nowhere is no library";
  EXPECT_FALSE(inventory.lacks(ToolkitPart::nvcc));
  EXPECT_FALSE(inventory.lacks(ToolkitPart::cudart_static));
}

TEST_F(HostToolkits, TheCompleteOnesHaveWhatEveryBuildNeedsAndCublas) {
  const auto inventory = inspect_toolkit_tree(debian_tree(m_dir, true));
  EXPECT_TRUE(inventory.complete());
  const std::vector<ToolkitPart> cublas = {ToolkitPart::cublas};
  EXPECT_TRUE(inventory.lacking(compat::parts_needed(cublas)).empty());
  const std::vector<ToolkitPart> cufft = {ToolkitPart::cufft};
  EXPECT_EQ(compat::describe_missing(inventory.lacking(compat::parts_needed(cufft))), "cuFFT (libcufft.so, cufft.h)");
}

TEST_F(HostToolkits, NvidiasThirteenLayoutKeepsHeadersUnderTargetsAndLibcudacxxUnderCccl) {
  const fs::path root = m_dir / "cuda-13.0";
  const fs::path target = root / "targets/x86_64-linux";
  touch(root / "bin/nvcc");
  touch(target / "include/cuda_runtime.h");
  touch(target / "include/cccl/cuda/std/type_traits");
  touch(target / "include/nccl.h");
  touch(target / "lib/libcudart.so");
  touch(target / "lib/libcudart_static.a");
  touch(target / "lib/libnccl.so");
  fs::create_directory_symlink("targets/x86_64-linux/lib", root / "lib");
  fs::create_directory_symlink("lib", root / "lib64");
  const auto inventory = inspect_toolkit_tree(root);
  EXPECT_TRUE(inventory.complete()) << compat::describe_missing(inventory.lacking(compat::parts_needed({})));
  EXPECT_FALSE(inventory.lacks(ToolkitPart::nccl));
  EXPECT_TRUE(inventory.lacks(ToolkitPart::npp));
}

TEST_F(HostToolkits, AnEmptyFolderLacksEverything) {
  const auto inventory = inspect_toolkit_tree(m_dir / "nothing");
  EXPECT_EQ(inventory.missing.size(), compat::toolkit_part_table().size());
  EXPECT_EQ(inventory.missing.front().describe(), "nvcc (bin/nvcc, cuda_runtime.h)");
}

TEST_F(HostToolkits, DiscoveryCarriesWhatEachTreeLacksAndTheCompleteOneIsFound) {
  const fs::path partial = debian_tree(m_dir / "a", false);
  const fs::path complete = debian_tree(m_dir / "b", true);
  // debian_tree's nvcc is a placeholder: make both answer as 12.4.
  toolkit(partial, "12.4.131");
  toolkit(complete, "12.4.131");
  site::HostToolkitSearch search;
  search.listed = {partial, complete};
  const auto found = site::discover_host_toolkits(search);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_FALSE(found[0].inventory.complete());
  EXPECT_TRUE(found[1].inventory.complete());
  const auto any = site::find_host_toolkit(found, *util::Version::parse("12.4"));
  EXPECT_EQ(any->root, fs::canonical(partial)) << "no parts asked: the first";
  const auto needed = compat::parts_needed({});
  const auto usable = site::find_host_toolkit(found, *util::Version::parse("12.4"), needed);
  ASSERT_TRUE(usable.has_value());
  EXPECT_EQ(usable->root, fs::canonical(complete));
}

}  // namespace
}  // namespace orc::site
