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
//   - the remote's credentials appear nowhere in the manifests;
// and (issue 29) what a build Job needs from outside reaches it through the
// real registry (scripts/start-registry.sh): a recipe's local source is
// refused until `--push` ships it as a signed snapshot, the Job names it by
// digest, and the Job's own command, run here after the source tree is
// deleted, fetches, checks and builds from it; a build image made in a real
// dockerd (scripts/start-dockerd.sh) is refused until `images push` puts it
// on the remote, the Job then names it by digest, and dockerd pulls that
// digest back as the very image built.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <chrono>
#include <thread>
#include <tuple>

#include "orchestrator/app/cluster/k8s.hpp"
#include "orchestrator/app/cluster/slurm.hpp"
#include "orchestrator/app/cluster/source_snapshot.hpp"
#include "orchestrator/app/images/images_push.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/app/smoke/smoke_attest.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/engine/archive.hpp"
#include "orchestrator/engine/docker.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/util/version.hpp"
#include "tests/integration/host_build.hpp"
#include "tests/integration/process.hpp"
#include "tests/integration/registry_process.hpp"

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
      const bool holds = op == "="    ? device == bound
                         : op == ">=" ? !(device < bound)
                         : op == "<"  ? device < bound
                         : op == ">"  ? bound < device
                         : op == "<=" ? !(bound < device)
                                      : !(device == bound);
      all = all && holds;
    }
    if (all) return true;
  }
  return false;
}

// k8s_render's refusal: its exit code and every diagnostic, one a line.
std::pair<util::ExitCode, std::string> refusal(const app::K8sRenderRequest& request) {
  try {
    app::k8s_render(request);
  } catch (const util::Failure& e) {
    std::string text;
    for (const auto& d : e.diagnostics()) text += d.headline() + "\n";
    return {e.code(), text.empty() ? e.what() : text};
  }
  return {util::ExitCode::ok, ""};
}

// Every image a pod of `yaml` pulls (containers and init containers).
std::vector<std::string> pod_images(const std::string& yaml) {
  std::vector<std::string> out;
  for (const YAML::Node& doc : YAML::LoadAll(yaml))
    for (const char* list : {"initContainers", "containers"})
      for (const auto& c : doc["spec"]["template"]["spec"][list]) out.push_back(c["image"].as<std::string>());
  return out;
}

// k8s_validate.py on `yaml`: its output, and whether every document is valid.
std::pair<bool, std::string> validate(const std::string& yaml, const fs::path& dir) {
  const fs::path file = dir / "jobs.yaml";
  std::ofstream(file) << yaml;
  const auto checked = run_process(
      {"/usr/bin/python3", std::string(ORC_SOURCE_DIR) + "/tests/integration/k8s_validate.py", file.string()});
  return {checked.exit_code == 0, checked.output};
}

TEST(K8sRender, JobsAreValidBatchV1AndSmokeJobsLandOnlyWhereTheSetRuns) {
  if (::access("/usr/local/cuda/bin/nvcc", X_OK) != 0) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda here";
  if (run_process({"/usr/bin/python3", "-c", "import kubernetes, yaml"}).exit_code != 0)
    GTEST_SKIP() << "Debian's python3-kubernetes is not installed (scripts/install-deps.sh --test)";
  TempDir dir("orc-k8s-it");
  RegistryProcess registry(dir.path() / "registry", "robot:s3cr3t-token");
  ASSERT_TRUE(registry.error().empty()) << registry.error();
  const std::string remote =
      "http://robot:s3cr3t-token@127.0.0.1:" + std::to_string(registry.port()) + "/team/artifacts";
  ::setenv("ORCHESTRATE_HOST_TOOLKITS", "/usr/local/cuda", 1);
  ::setenv("ORCHESTRATE_KEYS_DIR", (dir.path() / "keys").c_str(), 1);
  // The recipe's source is a tree of this run: the Job must do without it.
  const fs::path source = dir.path() / "src";
  fs::copy(std::string(ORC_SOURCE_DIR) + "/tests/integration/nested-project", source, fs::copy_options::recursive);
  std::ofstream(dir.path() / "orchestrate.yaml")
      << "remote: " << remote << "\n"
      << "tiers:\n  mixed:\n    gpus: [A100, H100]\n"
      << "recipes:\n  - name: lib\n    framework: cmake\n    source: {path: " << source.string()
      << "}\n    tiers: [mixed]\n    build:\n"
      << "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n      - cmake --build build\n"
      << "    artifacts: [\"**/libx.so\"]\n";
  const auto built = build_on_host(dir.path(), "mixed", "lib", std::cout);
  ASSERT_EQ(built.exit_code(), util::ExitCode::ok);
  ASSERT_EQ(built.builds.size(), 1u);

  app::K8sRenderRequest request{.config = dir.path() / "orchestrate.yaml",
                                .tier = "mixed",
                                .recipes = {},
                                .store_root = dir.path() / "store",
                                .tool_image = "registry.example/orchestrate:1"};
  // The plan builds in the host-mount image (this host's CUDA 13.0), which
  // no pod can run, and the source is on no remote: both refused, with
  // their fixes, and nothing printed.
  auto [code, refused] = refusal(request);
  std::cout << refused;
  EXPECT_EQ(code, util::ExitCode::bad_input);
  EXPECT_NE(refused.find("lib/mixed: its build image orchestrate/cuda:host-bookworm takes CUDA 13.0"),
            std::string::npos)
      << refused;
  EXPECT_NE(refused.find("run `orchestrate k8s render mixed --push`"), std::string::npos) << refused;
  // Official images: the plan builds in nvidia/cuda's 13.0 tag, a registry
  // image; the source is still not shipped.
  ::setenv("ORCHESTRATE_IMAGE_PREFERENCE", "official", 1);
  std::tie(code, refused) = refusal(request);
  EXPECT_EQ(code, util::ExitCode::bad_input);
  EXPECT_EQ(refused.find("host-bookworm"), std::string::npos) << refused;
  EXPECT_NE(refused.find("lib/mixed: its source " + source.string()), std::string::npos) << refused;

  request.push = true;
  const app::K8sRender render = app::k8s_render(request);
  std::cout << render.yaml;
  ASSERT_EQ(render.shipped.size(), 1u);
  std::cout << render.shipped[0] << "\n";
  // A build Job, and a smoke Job per compute capability of the tier.
  ASSERT_EQ(render.jobs.size(), 3u);
  EXPECT_EQ(render.jobs[0].name, "orc-build-lib-mixed");
  EXPECT_EQ(render.jobs[1].name, "orc-smoke-lib-mixed-sm80");
  EXPECT_EQ(render.jobs[2].name, "orc-smoke-lib-mixed-sm90");
  EXPECT_EQ(render.jobs[1].require_cuda, "cuda>=13.0");
  EXPECT_EQ(render.jobs[1].require_arch, "arch>=8.0");
  EXPECT_EQ(render.yaml.find("s3cr3t"), std::string::npos);
  // The build Job's image is a registry image, its source the shipped snapshot.
  EXPECT_TRUE(render.jobs[0].image.starts_with("docker.io/nvidia/cuda:")) << render.jobs[0].image;
  ASSERT_TRUE(render.jobs[0].source.starts_with("sha256:")) << render.jobs[0].source;
  for (const auto& image : pod_images(render.yaml)) EXPECT_FALSE(image.starts_with("orchestrate/")) << image;
  // Every comment line fits 100 columns.
  for (const auto& line : util::split_any(render.yaml, "\n"))
    if (line.starts_with("#")) EXPECT_LE(line.size(), 100u) << line;

  const auto [valid, checked] = validate(render.yaml, dir.path());
  std::cout << checked;
  EXPECT_TRUE(valid) << checked;
  EXPECT_NE(checked.find("Job orc-build-lib-mixed: valid V1Job"), std::string::npos);
  EXPECT_NE(checked.find("Job orc-smoke-lib-mixed-sm90: valid V1Job"), std::string::npos);

  // Rendered again without --push: the same tree finds the same snapshot.
  request.push = false;
  const app::K8sRender again = app::k8s_render(request);
  EXPECT_TRUE(again.shipped.empty());
  EXPECT_EQ(again.jobs[0].source, render.jobs[0].source);

  // A newer set by time that is not current (the built set attested, then
  // the built one made current again, as `promote` does): the smoke Jobs
  // still test the current set, and a note says so.
  {
    auto store = cache::Store::open(dir.path() / "store");
    ASSERT_TRUE(store) << store.error().message;
    const digest::Digest built_set = *built.builds[0].manifest;
    const auto config = site::load_config_file(dir.path() / "orchestrate.yaml", true);
    auto key = cache::SigningKey::generate();
    ASSERT_TRUE(key) << key.error().message;
    smoke::SmokeResult result;
    result.driver_version = "580.159.04";
    smoke::GpuResult gpu;
    gpu.name = "NVIDIA H100";
    gpu.cc = *arch::ComputeCapability::parse("9.0");
    result.gpus.push_back(gpu);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // sets are dated in whole seconds
    const digest::Digest attested =
        app::attest_artifact_set(*store, app::resolve_artifact_set(*store, built_set.to_string()), result,
                                 *config->find_tier("mixed"), {.host = "node-a", .key = *key});
    ASSERT_TRUE(cache::write_current(*store, "lib", "mixed", built_set));
    const app::K8sRender older = app::k8s_render(request);
    bool noted = false;
    for (const auto& note : older.notes)
      noted = noted || note.find("smoke lib/mixed tests the current set " + built_set.to_string() +
                                 "; a newer set by time, " + attested.to_string() + ", is not current") !=
                           std::string::npos;
    EXPECT_TRUE(noted) << util::join(older.notes, "\n");
    ASSERT_EQ(older.jobs.size(), 3u);
    EXPECT_NE(older.yaml.find(built_set.to_string()), std::string::npos) << "the smoke Jobs test the current set";
  }

  // The snapshot, checked as a Job checks it: by a key nobody trusts, refused.
  const auto snapshot = *digest::Digest::parse(render.jobs[0].source);
  auto sources = site::make_client(app::sources_url(remote));
  try {
    app::fetch_source(*sources, snapshot, cache::TrustedKeys{}, dir.path() / "untrusted");
    ADD_FAILURE() << "a snapshot signed by an untrusted key was accepted";
  } catch (const util::Failure& e) {
    EXPECT_EQ(e.code(), util::ExitCode::check_failed) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "untrusted"));

  // The build Job's own command, run here as a pod would run it: an empty
  // store, and the recipe's source tree gone.
  fs::remove_all(source);
  std::vector<std::string> command;
  for (const YAML::Node& doc : YAML::LoadAll(render.yaml))
    if (doc["metadata"]["name"].as<std::string>() == "orc-build-lib-mixed")
      command = doc["spec"]["template"]["spec"]["containers"][0]["command"].as<std::vector<std::string>>();
  const auto arg = [&](const std::string& flag) {
    const auto it = std::ranges::find(command, flag);
    return it != command.end() && it + 1 != command.end() ? *(it + 1) : std::string();
  };
  ASSERT_EQ(arg("--source"), render.jobs[0].source);
  ::setenv("ORCHESTRATE_CACHE_DIR", (dir.path() / "job-store").c_str(), 1);
  std::ostringstream job_out;
  const auto job_code = app::run_job(app::JobRunRequest{.work = app::SlurmWork::build,
                                                        .config = dir.path() / "orchestrate.yaml",
                                                        .recipe = arg("--recipe"),
                                                        .tier = arg("--tier"),
                                                        .node_engine = arg("--engine"),
                                                        .source = arg("--source"),
                                                        .out = &job_out});
  ::unsetenv("ORCHESTRATE_CACHE_DIR");
  std::cout << job_out.str();
  EXPECT_EQ(job_code, util::ExitCode::ok) << job_out.str();
  // Built from the snapshot, whose tree is the one the workstation keyed:
  // the same revision and the same cache key.
  EXPECT_NE(job_out.str().find("source snapshot " + render.jobs[0].source + " verified: tree:"), std::string::npos);
  auto job_store = cache::Store::open(dir.path() / "job-store");
  ASSERT_TRUE(job_store) << job_store.error().message;
  const auto job_set = cache::current_verified(*job_store, "lib", "mixed");
  ASSERT_TRUE(job_set && *job_set);
  const auto job_manifest = cache::load_artifact_set(*job_store, **job_set, cache::TrustedKeys{});
  ASSERT_TRUE(job_manifest) << job_manifest.error().message;
  EXPECT_EQ(job_manifest->manifest.key, built.builds[0].key);
  EXPECT_EQ(job_manifest->manifest.source_kind, "path");

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
  ::unsetenv("ORCHESTRATE_IMAGE_PREFERENCE");
}

}  // namespace
}  // namespace orc::integration

namespace orc::integration {
namespace {

// A dockerd of this test's own (scripts/start-dockerd.sh), stopped by the
// destructor.
class Dockerd {
 public:
  explicit Dockerd(const fs::path& dir) : m_dir(dir) {
    const auto started = run_process({std::string(ORC_SOURCE_DIR) + "/scripts/start-dockerd.sh", dir.string()});
    if (started.exit_code != 0) m_error = "dockerd could not start here: " + started.output;
  }
  ~Dockerd() {
    if (m_error.empty()) run_process({std::string(ORC_SOURCE_DIR) + "/scripts/stop-dockerd.sh", m_dir.string()});
  }
  const std::string& error() const { return m_error; }
  fs::path socket() const { return m_dir / "docker.sock"; }

 private:
  fs::path m_dir;
  std::string m_error;
};

TEST(K8sRender, BuildImagesArePushedToTheRemoteAndNamedByDigest) {
  if (::geteuid() != 0) GTEST_SKIP() << "dockerd needs root (run the suite as root, as CI does)";
  if (run_process({"/usr/bin/python3", "-c", "import kubernetes, yaml"}).exit_code != 0)
    GTEST_SKIP() << "Debian's python3-kubernetes is not installed (scripts/install-deps.sh --test)";
  TempDir dir("orc-k8s-img");
  Dockerd dockerd(dir.path() / "engine");
  if (!dockerd.error().empty()) GTEST_SKIP() << dockerd.error();
  RegistryProcess registry(dir.path() / "registry");
  ASSERT_TRUE(registry.error().empty()) << registry.error();
  ::setenv("ORCHESTRATE_CACHE_DIR", (dir.path() / "cache").c_str(), 1);

  // The 12.4-trixie image takes minutes and 5 GB to make (integration_images
  // does); a small root file system imported under its reference stands in
  // for it: the push reads whatever image the engine holds there.
  fs::create_directories(dir.path() / "rootfs" / "etc");
  std::ofstream(dir.path() / "rootfs" / "etc" / "stand-in") << "12.4-trixie stand-in for " << dir.path() << "\n";
  ASSERT_TRUE(engine::write_context_tar(dir.path() / "rootfs", dir.path() / "rootfs.tar"));
  auto engine = engine::DockerClient::connect(engine::make_unix_socket_transport(dockerd.socket()));
  ASSERT_TRUE(engine) << engine.error().message;
  const auto imported = engine->import_image(dir.path() / "rootfs.tar", "orchestrate/cuda", "12.4-trixie");
  ASSERT_TRUE(imported) << imported.error().message;
  site::save_image_record(site::image_state_path(), {.name = "12.4-trixie",
                                                     .reference = "orchestrate/cuda:12.4-trixie",
                                                     .id = imported->id,
                                                     .toolkit = "12.4.127",
                                                     .engine = dockerd.socket().string()});

  const std::string remote = registry.url("team/artifacts");
  std::ofstream(dir.path() / "orchestrate.yaml")
      << "remote: " << remote << "\n"
      << "tiers:\n  ampere:\n    gpus: [A100]\n"
      << "recipes:\n  - name: app\n    framework: cmake\n"
      << "    source: {git: \"https://git.example/app.git\", ref: v1}\n"
      << "    requires: {cuda: \"12.4\"}\n    tiers: [ampere]\n    build:\n      - cmake -S . -B build\n"
      << "    artifacts: [\"**/*.so\"]\n";
  app::K8sRenderRequest request{.config = dir.path() / "orchestrate.yaml",
                                .tier = "ampere",
                                .recipes = {},
                                .store_root = dir.path() / "store",
                                .tool_image = "registry.example/orchestrate:1"};
  // Built but not pushed: refused, naming the command.
  const auto [code, refused] = refusal(request);
  std::cout << refused;
  EXPECT_EQ(code, util::ExitCode::bad_input);
  EXPECT_NE(refused.find("orchestrate/cuda:12.4-trixie is not pushed to " + remote +
                         " as built: run `orchestrate images push 12.4-trixie`"),
            std::string::npos)
      << refused;

  const app::ImagePushRequest push{
      .names = {"12.4-trixie"}, .config = dir.path() / "orchestrate.yaml", .engine_socket = dockerd.socket()};
  const app::ImagePushReport pushed = app::push_images(push, std::cout);
  ASSERT_EQ(pushed.images.size(), 1u);
  const app::PushedImage& image = pushed.images[0];
  const std::string repository = "127.0.0.1:" + std::to_string(registry.port()) + "/team/artifacts/orchestrate/cuda";
  EXPECT_TRUE(image.pushed.starts_with(repository + "@sha256:")) << image.pushed;
  EXPECT_EQ(image.uploaded, 2);  // the config and the one layer
  EXPECT_FALSE(image.up_to_date);
  EXPECT_EQ(site::find_built_image("12.4-trixie")->pushed, image.pushed);
  // Pushed again: recorded, and the remote has it: nothing read or sent.
  const app::ImagePushReport again = app::push_images(push, std::cout);
  EXPECT_TRUE(again.images.at(0).up_to_date);
  EXPECT_EQ(again.images.at(0).pushed, image.pushed);

  const app::K8sRender render = app::k8s_render(request);
  std::cout << render.yaml;
  ASSERT_EQ(render.jobs.size(), 1u);
  EXPECT_EQ(render.jobs[0].image, image.pushed);
  EXPECT_TRUE(render.jobs[0].source.empty());  // a git source: the Job clones it
  for (const auto& pulled : pod_images(render.yaml)) EXPECT_FALSE(pulled.starts_with("orchestrate/")) << pulled;
  const auto [valid, checked] = validate(render.yaml, dir.path());
  std::cout << checked;
  EXPECT_TRUE(valid) << checked;

  // What a node pulls by that digest is the very image built here.
  const auto back = engine->pull_image(image.pushed);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->id, imported->id);
  ::unsetenv("ORCHESTRATE_CACHE_DIR");
}

}  // namespace
}  // namespace orc::integration
