#pragma once
// The fixture of the container-engine build suites (build_suite.cpp, and
// matrix_suite.cpp's example and fixture matrix): the engine the binary
// started (engine_service.hpp), a configuration and a store of this run,
// images made by app::build_image from rootfs tars cached in
// fixtures/images of the build tree.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/images/images.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/cli/render.hpp"
#include "tests/integration/engine_service.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {

// A saxpy-cmake recipe entry of the test configurations.
inline std::string saxpy_recipe(const std::string& name, const std::string& tiers, const std::string& steps,
                                const std::string& artifacts, const std::string& extra = {}) {
  const std::string src = std::string(ORC_SOURCE_DIR) + "/recipes/examples/saxpy-cmake";
  return "  - name: " + name + "\n    framework: cmake\n    source: {path: " + src + "}\n    tiers: [" + tiers +
         "]\n    build:\n" + steps + "    artifacts: [\"" + artifacts + "\"]\n" + extra;
}

// `extra` goes under the saxpy-cmake recipe (image:, stamp:).
inline std::string config_text(const std::string& gpus, const std::string& extra = {}) {
  const std::string cmake_steps =
      "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n"
      "      - cmake --build build --parallel\n";
  return "toolkits: [\"13.0\"]\ntiers:\n  tier-x:\n    gpus: [" + gpus + "]\nrecipes:\n" +
         saxpy_recipe("saxpy-cmake", "tier-x", cmake_steps, "build/saxpy", extra) +
         saxpy_recipe("fails", "tier-x", "      - [\"false\"]\n", "build/saxpy") +
         saxpy_recipe("no-match", "tier-x", "      - [\"true\"]\n", "build/nothing-*.so") +
         saxpy_recipe("slow", "tier-x", "      - [\"sh\", \"-c\", \"echo started; exec sleep 20\"]\n", "build/saxpy");
}

inline std::string errors(const app::BuildResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e + "\n";
  return out;
}

class BuildInEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    const EngineService& s = engine_service();
    if (!s.skip_reason.empty()) GTEST_SKIP() << s.skip_reason;
    ASSERT_TRUE(s.setup_error.empty()) << s.setup_error;
    if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda here";
    if (run_process({"sh", "-c", "command -v debootstrap"}).exit_code != 0)
      GTEST_SKIP() << "debootstrap is not installed (apt-get install debootstrap)";
    m_kind = s.name == "podman" ? engine::EngineKind::podman : engine::EngineKind::docker;
    // The image state file and the build store belong to this run; the
    // engine is found the way a user's shell would point at it.
    ::setenv("ORCHESTRATE_CACHE_DIR", (s.dir / "cache").c_str(), 1);
    ::setenv("ORCHESTRATE_KEYS_DIR", (s.dir / "keys").c_str(), 1);
    ::setenv(m_kind == engine::EngineKind::podman ? "CONTAINER_HOST" : "DOCKER_HOST",
             ("unix://" + s.socket.string()).c_str(), 1);
    m_config = s.dir / "orchestrate.yaml";
    m_store = s.dir / "store";
  }

  void ensure_image(const std::string& name) {
    const auto start = std::chrono::steady_clock::now();
    const app::ImageBuildResult image =
        app::build_image({.name = name,
                          .engine_socket = engine_service().socket,
                          .cache_dir = std::filesystem::path(ORC_FIXTURES_DIR) / "images",
                          .images_dir = std::filesystem::path(ORC_SOURCE_DIR) / "images",
                          .keep_rootfs = true},
                         std::cout);
    say(name + " ready in " + seconds_since(start) + " s (rootfs tar " + (image.rootfs_cached ? "cached" : "made") +
        ")");
    ASSERT_TRUE(image.record.id.starts_with("sha256:")) << image.record.id;
  }

  app::BuildReport build_tiers(const std::vector<std::string>& tiers, const std::vector<std::string>& recipes,
                               std::ostream& progress = std::cout) {
    const auto start = std::chrono::steady_clock::now();
    app::BuildReport report = app::build(app::BuildRequest{.config = m_config,
                                                           .tiers = tiers,
                                                           .recipes = recipes,
                                                           .engine = m_kind,
                                                           .jobs = 2,
                                                           .explain = false,
                                                           .store_root = m_store,
                                                           .terminal = false},
                                         progress);
    say(cli::render_build_text(report, false) + "  in " + seconds_since(start) + " s");
    return report;
  }

  app::BuildResult build(const std::string& recipe, std::ostream& progress = std::cout) {
    const app::BuildReport report = build_tiers({"tier-x"}, {recipe}, progress);
    EXPECT_EQ(report.builds.size(), 1u);
    if (report.builds.empty()) return {};
    return report.builds.front();
  }

  void write_config(const std::string& gpus, const std::string& extra = {}) {
    std::ofstream(m_config) << config_text(gpus, extra);
  }

  // Artifact sets the store's index holds for a cache key.
  std::size_t sets_for(const std::string& key) {
    auto store = cache::Store::open(m_store);
    if (!store) {
      ADD_FAILURE() << store.error().message;
      return 0;
    }
    auto sets = store->index().list({.recipe = {}, .tier = {}, .key = key, .verified_only = false});
    if (!sets) ADD_FAILURE() << sets.error().message;
    return sets ? sets->size() : 0;
  }

  engine::EngineKind m_kind = engine::EngineKind::docker;
  std::filesystem::path m_config;
  std::filesystem::path m_store;
};

}  // namespace orc::integration
