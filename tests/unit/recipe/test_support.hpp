#pragma once
// Helpers the recipe tests share: parse text and look at what a user sees.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/recipe/config.hpp"

namespace orc::recipe::testing {

// Every error headline of a parse that must fail; a parse that succeeds
// fails the test instead.
inline std::vector<std::string> error_headlines(std::string_view text, const std::filesystem::path& file = "t.yaml") {
  const auto result = parse_config(text, file);
  EXPECT_FALSE(result.has_value()) << "expected the configuration to be rejected";
  std::vector<std::string> out;
  if (!result)
    for (const auto& d : result.error()) out.push_back(d.headline());
  return out;
}

// The Config of a parse that must succeed, printing every error otherwise.
inline Config parse_ok(std::string_view text, const std::filesystem::path& file = "t.yaml") {
  auto result = parse_config(text, file);
  if (!result) {
    std::string all;
    for (const auto& d : result.error()) all += d.render();
    ADD_FAILURE() << "expected the configuration to load, got:\n" << all;
    return Config{};
  }
  return std::move(*result);
}

// A fresh directory under the test temp dir, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_path = std::filesystem::temp_directory_path() / ("orc-recipe-" + std::string(info->test_suite_name()) + "-" +
                                                       info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(m_path);
    std::filesystem::create_directories(m_path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path write(const std::string& relative, std::string_view text) const {
    const auto p = m_path / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::filesystem::path m_path;
};

// Tiers most tests need, so each test shows only what it is about.
inline constexpr std::string_view k_tiers = R"(tiers:
  tier-new:
    gpus: ["H100", "8.6"]
)";

}  // namespace orc::recipe::testing
