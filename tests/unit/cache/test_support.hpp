#pragma once
// Shared by the cache tests: a fresh directory per test, removed after it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/manifest.hpp"

namespace orc::cache::testing {

// A digest from 64 hex digits the test wrote: the test's own data, so a typo
// fails the test at once.
inline digest::Digest hex_digest(std::string_view hex) { return digest::Digest::from_hex(hex).value(); }
// What a user would type to name a set.
inline digest::DigestPrefix prefix(std::string_view text) { return digest::DigestPrefix::parse(text).value(); }

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = std::filesystem::temp_directory_path() / ("orc-cache-" + std::string(info->test_suite_name()) + "-" +
                                                      info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(m_dir);
    std::filesystem::create_directories(m_dir);
  }
  void TearDown() override {
    std::error_code ec;
    // Tests leave read-only directories behind on purpose; make them removable.
    for (auto it = std::filesystem::recursive_directory_iterator(m_dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory(ec) && !it->is_symlink(ec))
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add,
                                     ec);
    std::filesystem::remove_all(m_dir, ec);
  }

  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto path = m_dir / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  static std::string slurp(const std::filesystem::path& path) { return read_file(path).value_or("<unreadable>"); }

  std::filesystem::path m_dir;
};

// A manifest with every field set, files sorted by path.
inline Manifest sample_manifest(const std::string& recipe = "vision-ext", const std::string& tier = "tier-new") {
  Manifest m;
  m.recipe = recipe;
  m.framework = "pytorch";
  m.tier = tier;
  m.key = "k-" + recipe + "-" + tier;
  m.source_kind = "git";
  m.source_revision = "0123456789abcdef0123456789abcdef01234567";
  m.engine = "docker";
  m.image = "orchestrate/cuda:12.4-trixie";
  m.image_digest = "sha256:" + std::string(64, 'e');
  m.toolkit = "12.4";
  m.cudnn = "9.1.0";
  m.host_compiler = "gcc 12.2.0";
  m.files = {{.path = "lib/libvision.so",
              .sha256 = std::string(64, 'a'),
              .size = 1234,
              .requested_sass = {"sm_80", "sm_86"},
              .requested_ptx = {"compute_90"},
              .embedded_sass = {"sm_80", "sm_86"},
              .embedded_ptx = {"compute_90"}},
             {.path = "vision.whl",
              .sha256 = std::string(64, 'b'),
              .size = 99,
              .requested_sass = {"sm_80"},
              .requested_ptx = {},
              .embedded_sass = {},
              .embedded_ptx = {}}};
  m.build_log = hex_digest(std::string(64, 'c'));
  m.warnings = {"sm_90 runs by JIT"};
  m.created = "2025-01-02T03:04:05Z";
  m.smoke["tier-new"] = {{.gpu = "NVIDIA H100 80GB HBM3",
                          .cc = "9.0",
                          .driver = "550.54.15",
                          .outcome = "pass",
                          .time = "2025-01-02T04:00:00Z"}};
  return m;
}

}  // namespace orc::cache::testing
