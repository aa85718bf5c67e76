// `orchestrate k8s render` (issue 15) with no API server: a set built here on
// the host (nvcc 13.0, sm_80 and sm_90 SASS, compute_90 PTX) for a tier of
// A100s and H100s, its Jobs rendered, then
//   - every manifest checked against batch/v1 Job as Debian's
//     python3-kubernetes models define it (k8s_validate.py: required fields,
//     types, no unknown field);
//   - each smoke Job's nodeSelector matched against the GFD labels of the
//     nodes of tests/unit/inventory/data/kubectl-nodes.json, and its
//     NVIDIA_REQUIRE_ARCH evaluated as the container toolkit evaluates it
//     for each matched node's compute capability (it must allow the nodes
//     its selector picks, and refuse the T4 node);
//   - the remote's credentials appear nowhere in the manifests.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/app/cluster/k8s.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/util/version.hpp"
#include "tests/integration/host_build.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;

// NVIDIA_REQUIRE_* as libnvidia-container reads it: space-separated
// alternatives, each comma-separated constraints that must all hold.
bool allows(const std::string& expression, const std::string& cc) {
  const auto device = *util::Version::parse(cc);
  for (const auto& alternative : util::split_any(expression, " ")) {
    bool all = true;
    for (const auto& constraint : util::split_any(alternative, ",")) {
      EXPECT_TRUE(constraint.starts_with("arch")) << constraint;
      std::string rest = constraint.substr(4);
      std::string op;
      while (!rest.empty() && std::string_view("<>=!").find(rest.front()) != std::string_view::npos) {
        op += rest.front();
        rest.erase(0, 1);
      }
      const auto bound = *util::Version::parse(rest);
      const bool holds = op == "=" ? device == bound : op == ">=" ? !(device < bound) : op == "<" ? device < bound
                         : op == ">"  ? bound < device
                         : op == "<=" ? !(bound < device)
                                      : !(device == bound);
      all = all && holds;
    }
    if (all) return true;
  }
  return false;
}

TEST(K8sRender, JobsAreValidBatchV1AndSmokeJobsLandOnlyWhereTheSetRuns) {
  if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda here";
  if (run_process({"/usr/bin/python3", "-c", "import kubernetes, yaml"}).exit_code != 0)
    GTEST_SKIP() << "Debian's python3-kubernetes is not installed (scripts/install-deps.sh --test)";
  TempDir dir("orc-k8s-it");
  ::setenv("ORCHESTRATE_HOST_TOOLKITS", "/usr/local/cuda", 1);
  ::setenv("ORCHESTRATE_KEYS_DIR", (dir.path() / "keys").c_str(), 1);
  std::ofstream(dir.path() / "orchestrate.yaml")
      << "remote: http://robot:s3cr3t-token@127.0.0.1:5000/team/artifacts\n"
      << "tiers:\n  mixed:\n    gpus: [A100, H100]\n"
      << "recipes:\n  - name: lib\n    framework: cmake\n    source: {path: " << ORC_SOURCE_DIR
      << "/tests/integration/nested-project}\n    tiers: [mixed]\n    build:\n"
      << "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n      - cmake --build build\n"
      << "    artifacts: [\"**/libx.so\"]\n";
  const auto built = build_on_host(dir.path(), "mixed", "lib", std::cout);
  ASSERT_EQ(built.exit_code(), util::ExitCode::ok);

  const app::K8sRender render = app::k8s_render({.config = dir.path() / "orchestrate.yaml",
                                                 .tier = "mixed",
                                                 .recipes = {},
                                                 .store_root = dir.path() / "store",
                                                 .tool_image = "registry.example/orchestrate:1"});
  std::cout << render.yaml;
  // A build Job, and a smoke Job per compute capability of the tier.
  ASSERT_EQ(render.jobs.size(), 3u);
  EXPECT_EQ(render.jobs[0].name, "orc-build-lib-mixed");
  EXPECT_EQ(render.jobs[1].name, "orc-smoke-lib-mixed-sm80");
  EXPECT_EQ(render.jobs[2].name, "orc-smoke-lib-mixed-sm90");
  EXPECT_EQ(render.jobs[1].require_cuda, "cuda>=13.0");
  EXPECT_EQ(render.jobs[1].require_arch, "arch>=8.0");
  EXPECT_EQ(render.yaml.find("s3cr3t"), std::string::npos);

  const fs::path file = dir.path() / "jobs.yaml";
  std::ofstream(file) << render.yaml;
  const auto checked = run_process({"/usr/bin/python3", std::string(ORC_SOURCE_DIR) + "/tests/integration/k8s_validate.py",
                                    file.string()});
  std::cout << checked.output;
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_NE(checked.output.find("Job orc-smoke-lib-mixed-sm90: valid V1Job"), std::string::npos);

  // The GFD fixture's nodes: which each smoke Job's selector picks, and
  // whether the container toolkit would start it there.
  std::ifstream nodes_in(std::string(ORC_SOURCE_DIR) + "/tests/unit/inventory/data/kubectl-nodes.json");
  const auto nodes = nlohmann::json::parse(nodes_in);
  std::map<std::string, std::vector<std::string>> picked;
  for (const YAML::Node& doc : YAML::LoadAll(render.yaml)) {
    if (doc["spec"]["template"]["spec"]["containers"][0]["name"].as<std::string>() != "smoke") continue;
    const YAML::Node pod = doc["spec"]["template"]["spec"];
    const std::string name = doc["metadata"]["name"].as<std::string>();
    EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 1);
    std::string require;
    for (const auto& e : pod["containers"][0]["env"])
      if (e["name"].as<std::string>() == "NVIDIA_REQUIRE_ARCH") require = e["value"].as<std::string>();
    for (const auto& item : nodes["items"]) {
      const auto& labels = item["metadata"]["labels"];
      bool match = true;
      for (const auto& kv : pod["nodeSelector"])
        match = match && labels.contains(kv.first.as<std::string>()) &&
                labels[kv.first.as<std::string>()] == kv.second.as<std::string>();
      const std::string node = item["metadata"]["name"];
      if (!match) continue;
      picked[name].push_back(node);
      const std::string cc = labels["nvidia.com/gpu.compute.major"].get<std::string>() + "." +
                             labels["nvidia.com/gpu.compute.minor"].get<std::string>();
      EXPECT_TRUE(allows(require, cc)) << name << " on " << node << " (" << cc << "): " << require;
    }
    EXPECT_FALSE(allows(require, "7.5")) << require;  // the T4 node: refused
  }
  EXPECT_EQ(picked["orc-smoke-lib-mixed-sm80"], std::vector<std::string>{"k8s-a30-0"});
  EXPECT_EQ(picked["orc-smoke-lib-mixed-sm90"], std::vector<std::string>{"k8s-h100-0"});
  ::unsetenv("ORCHESTRATE_HOST_TOOLKITS");
  ::unsetenv("ORCHESTRATE_KEYS_DIR");
}

}  // namespace
}  // namespace orc::integration
