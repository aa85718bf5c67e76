// Issue 28: configs a registry can hand stamp that must not crash it, cost
// it unbounded memory or leave a stamp that nodes would skip.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "orchestrator/app/stamp/stamp.hpp"

namespace orc::app {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool k_address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool k_address_sanitizer = true;
#else
constexpr bool k_address_sanitizer = false;
#endif
#else
constexpr bool k_address_sanitizer = false;
#endif

const StampValues k_values{.require_cuda = "cuda>=13.0", .require_arch = "arch>=8.0"};

// An image config whose "x" nests `depth` arrays (the document one more).
std::string config_nesting(std::size_t depth) {
  return R"({"architecture":"amd64","config":{"Env":["PATH=/bin"]},"x":)" + std::string(depth, '[') +
         std::string(depth, ']') + "}";
}

// 100,000 levels crashed the dump (stack overflow) where 60,000 passed;
// both are refused now, before they are parsed, and the bound's own depth
// still stamps.
TEST(StampHostile, AConfigNestedPastTheBoundIsRefusedNotCrashedOn) {
  for (const std::size_t depth : {std::size_t{60'000}, std::size_t{100'000}, k_max_config_depth}) {
    const auto out = stamp_config(config_nesting(depth), k_values, "t", "sha256:00");
    ASSERT_FALSE(out) << depth;
    EXPECT_EQ(out.error(),
              "the image config nests arrays or objects deeper than 256 levels, which no image config needs; "
              "rebuild the image with a config that does not");
  }
  const auto out = stamp_config(config_nesting(k_max_config_depth - 1), k_values, "t", "sha256:00");
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(nlohmann::json::parse(out->json)["config"]["Env"].size(), 3u);
}

std::size_t address_space_in_use() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// The largest config the scan takes (4 MiB) all '[': four million levels.
// A child under RLIMIT_AS of 256 MiB above what it holds at the start says
// which way stamp_config ended: 0 refused for its depth, 1 anything else.
TEST(StampHostile, TheDeepestConfigTheScanTakesStaysWithinBoundedMemory) {
  if (k_address_sanitizer)
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: RLIMIT_AS cannot bound it";
  const std::string config = "{\"x\":" + std::string((4u << 20) - 6, '[') + "}";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const rlimit limit{.rlim_cur = address_space_in_use() + (256u << 20), .rlim_max = RLIM_INFINITY};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(2);
    const auto out = stamp_config(config, k_values, "t", "sha256:00");
    ::_exit(!out && out.error().starts_with("the image config nests") ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// NVIDIA_DISABLE_REQUIRE makes the container toolkit skip every
// NVIDIA_REQUIRE_* check: kept, the stamp would be refused by no node.
TEST(StampHostile, DisableRequireIsTakenOutAndSaid) {
  const std::string config = R"({"config":{"Env":["PATH=/bin","NVIDIA_DISABLE_REQUIRE=1",
      "NVIDIA_DISABLE_REQUIREMENTS=kept","NVIDIA_DISABLE_REQUIRE","NVIDIA_DISABLE_REQUIRE=false"]}})";
  const auto out = stamp_config(config, k_values, "t", "sha256:00");
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(out->removed, (std::vector<std::string>{"NVIDIA_DISABLE_REQUIRE=1", "NVIDIA_DISABLE_REQUIRE",
                                                    "NVIDIA_DISABLE_REQUIRE=false"}));
  EXPECT_EQ(nlohmann::json::parse(out->json)["config"]["Env"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"PATH=/bin", "NVIDIA_DISABLE_REQUIREMENTS=kept", "NVIDIA_REQUIRE_CUDA=cuda>=13.0",
                                      "NVIDIA_REQUIRE_ARCH=arch>=8.0"}));
  // Stamped again, nothing is left to take out.
  const auto again = stamp_config(out->json, k_values, "t", "sha256:00");
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->removed.empty());
  EXPECT_EQ(again->json, out->json);
}

}  // namespace
}  // namespace orc::app
