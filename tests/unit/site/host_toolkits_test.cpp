#include "orchestrator/site/host_toolkits.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace orc::site {
namespace {

namespace fs = std::filesystem;

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

}  // namespace
}  // namespace orc::site
