#include "orchestrator/app/cluster/k8s.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "orchestrator/app/cluster/k8s_deploy.hpp"
#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/arch/requirement.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/site/library_needs.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/site/store_root.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/util/version.hpp"
#include "orchestrator/version.hpp"

namespace orc::app {

namespace {

using util::ExitCode;

constexpr const char* k_config_dir = "/etc/orchestrate/config";
constexpr const char* k_keys_dir = "/etc/orchestrate/keys";
constexpr const char* k_bin_dir = "/opt/orchestrate/bin";

// The current set of a pair here (cache/current.hpp), with its manifest (read back and
// its digests re-checked by cache::load_artifact_set).
// `notes` gets a line when a verified set newer by time is not the current one.
std::optional<std::pair<std::string, cache::Manifest>> newest_set(cache::Store& store, const std::string& recipe,
                                                                  const std::string& tier, std::vector<std::string>& notes) {
  auto current = cache::current_set(store, recipe, tier);
  if (!current || !current->entry) return std::nullopt;
  auto loaded = cache::load_artifact_set(store, *current->entry, cache::TrustedKeys{});
  if (!loaded) return std::nullopt;
  if (current->newer)
    notes.push_back("smoke " + recipe + "/" + tier + " tests the current set " + current->entry->manifest.to_string() +
                    "; a newer set by time, " + current->newer->manifest.to_string() +
                    ", is not current ('orchestrate promote " + recipe + " --tier " + tier + " --digest " +
                    current->newer->manifest.to_string() + "' makes it so)");
  return std::pair{current->entry->manifest.to_string(), std::move(loaded->manifest)};
}

void labels(YAML::Emitter& y, const K8sJob& job) {
  y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "app.kubernetes.io/managed-by" << YAML::Value << "orchestrate";
  y << YAML::Key << "orchestrate.dev/work" << YAML::Value << job.work;
  y << YAML::Key << "orchestrate.dev/recipe" << YAML::Value << k8s_name(job.recipe);
  y << YAML::Key << "orchestrate.dev/tier" << YAML::Value << k8s_name(job.tier);
  y << YAML::EndMap;
}

void env(YAML::Emitter& y, const std::string& name, const std::string& value) {
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name << YAML::Key << "value" << YAML::Value
    << YAML::DoubleQuoted << value << YAML::EndMap;
}

void emit_job(YAML::Emitter& y, const K8sJob& job, const K8sRenderRequest& request) {
  y << YAML::BeginDoc << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "batch/v1";
  y << YAML::Key << "kind" << YAML::Value << "Job";
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << job.name;
  if (!request.namespace_.empty()) y << YAML::Key << "namespace" << YAML::Value << request.namespace_;
  labels(y, job);
  y << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "orchestrate.dev/recipe" << YAML::Value << job.recipe;
  y << YAML::Key << "orchestrate.dev/tier" << YAML::Value << job.tier;
  if (!job.set.empty()) y << YAML::Key << "orchestrate.dev/set" << YAML::Value << job.set;
  if (!job.source.empty()) y << YAML::Key << "orchestrate.dev/source" << YAML::Value << job.source;
  if (!job.needs.empty()) {
    std::vector<std::string> sonames;
    for (const auto& n : job.needs) sonames.push_back(n.soname);
    y << YAML::Key << "orchestrate.dev/needs" << YAML::Value << util::join(sonames, " ");
  }
  y << YAML::EndMap << YAML::EndMap;

  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "backoffLimit" << YAML::Value << 0;
  y << YAML::Key << "ttlSecondsAfterFinished" << YAML::Value << 86400;
  y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  labels(y, job);
  y << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "restartPolicy" << YAML::Value << "Never";
  if (!job.node_selector.empty()) {
    y << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : job.node_selector) y << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
    y << YAML::EndMap;
  }
  if (!request.pull_secret.empty()) {
    y << YAML::Key << "imagePullSecrets" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << request.pull_secret << YAML::EndMap << YAML::EndSeq;
  }
  const bool build = job.work == "build";
  const std::string bin = build ? std::string(k_bin_dir) + "/orchestrate" : "orchestrate";
  if (build) {
    // The tool into the build image: copied from its own image.
    y << YAML::Key << "initContainers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    y << YAML::Key << "name" << YAML::Value << "orchestrate";
    y << YAML::Key << "image" << YAML::Value << request.tool_image;
    y << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq << "cp"
      << "/usr/local/bin/orchestrate" << std::string(k_bin_dir) + "/orchestrate" << YAML::EndSeq;
    y << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << "orchestrate-bin" << YAML::Key << "mountPath" << YAML::Value << k_bin_dir << YAML::EndMap
      << YAML::EndSeq;
    y << YAML::EndMap << YAML::EndSeq;
  }
  y << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << job.work;
  y << YAML::Key << "image" << YAML::Value << job.image;
  y << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq << bin << "job" << job.work << "--recipe"
    << job.recipe << "--tier" << job.tier << "-f" << std::string(k_config_dir) + "/orchestrate.yaml";
  if (build) {
    y << "--engine"
      << "host";
    if (!job.source.empty()) y << "--source" << job.source;
  } else
    y << "--set" << job.set;
  y << YAML::EndSeq;
  y << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
  // The remote with its credentials, from the Secret: never in the manifest.
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "ORCHESTRATE_REMOTE" << YAML::Key << "valueFrom"
    << YAML::Value << YAML::BeginMap << YAML::Key << "secretKeyRef" << YAML::Value << YAML::BeginMap << YAML::Key
    << "name" << YAML::Value << request.registry_secret << YAML::Key << "key" << YAML::Value << "remote" << YAML::EndMap
    << YAML::EndMap << YAML::EndMap;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "ORCHESTRATE_KEYS_DIR" << YAML::Key << "value"
    << YAML::Value << k_keys_dir << YAML::EndMap;
  if (!build) {
    env(y, "NVIDIA_REQUIRE_CUDA", job.require_cuda);
    env(y, "NVIDIA_REQUIRE_ARCH", job.require_arch);
    env(y, "NVIDIA_DRIVER_CAPABILITIES", "compute,utility");
  }
  y << YAML::EndSeq;
  if (!build) {
    y << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits" << YAML::Value
      << YAML::BeginMap << YAML::Key << "nvidia.com/gpu" << YAML::Value << 1 << YAML::EndMap << YAML::EndMap;
  }
  y << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "config" << YAML::Key << "mountPath" << YAML::Value
    << k_config_dir << YAML::Key << "readOnly" << YAML::Value << true << YAML::EndMap;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "keys" << YAML::Key << "mountPath" << YAML::Value
    << k_keys_dir << YAML::Key << "readOnly" << YAML::Value << true << YAML::EndMap;
  if (build)
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "orchestrate-bin" << YAML::Key << "mountPath"
      << YAML::Value << k_bin_dir << YAML::EndMap;
  y << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndSeq;  // the container, containers
  y << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "config" << YAML::Key << "configMap" << YAML::Value
    << YAML::BeginMap << YAML::Key << "name" << YAML::Value << request.config_map << YAML::EndMap << YAML::EndMap;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "keys" << YAML::Key << "secret" << YAML::Value
    << YAML::BeginMap << YAML::Key << "secretName" << YAML::Value << "orchestrate-keys" << YAML::EndMap << YAML::EndMap;
  if (build)
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "orchestrate-bin" << YAML::Key << "emptyDir"
      << YAML::Value << YAML::BeginMap << YAML::EndMap << YAML::EndMap;
  y << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndMap;  // pod spec, template, spec, job
  y << YAML::EndDoc;
}

}  // namespace

std::string k8s_name(const std::string& text) {
  std::string out;
  for (char c : util::to_lower(text)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (ok)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 63) {
    const std::string hash = digest::sha256(text).hex().substr(0, 8);
    out = out.substr(0, 54);
    while (!out.empty() && out.back() == '-') out.pop_back();
    out += "-" + hash;
  }
  return out.empty() ? "orchestrate" : out;
}

K8sRender k8s_render(const K8sRenderRequest& request) {
  const auto config = load_plan_config(request.config);
  const recipe::Tier& tier = find_tier(*config, request.tier);
  for (const auto& r : request.recipes)
    if (!config->find_recipe(r))
      throw util::Failure(ExitCode::bad_input, "unknown recipe '" + r + "' in " + request.config.string());
  const PlanReport planned =
      plan(config, PlanScope{.tiers = {request.tier}, .recipes = request.recipes, .toolkits = std::nullopt});
  auto store = cache::Store::open(site::store_root(request.store_root));

  // The tier's nodes, one selector per compute capability (a smoke test
  // proves something only on a node of that CC).
  std::vector<std::map<std::string, std::string>> selectors;
  if (tier.kubernetes && !tier.kubernetes->selector.empty()) {
    selectors.push_back(tier.kubernetes->selector);
  } else {
    std::vector<arch::ComputeCapability> ccs;
    for (const auto& g : tier.gpus)
      if (std::ranges::find(ccs, g.cc.base()) == ccs.end()) ccs.push_back(g.cc.base());
    std::ranges::sort(ccs);
    for (const auto& cc : ccs)
      selectors.push_back({{"nvidia.com/gpu.compute.major", std::to_string(cc.major())},
                           {"nvidia.com/gpu.compute.minor", std::to_string(cc.minor())}});
  }

  const auto remote = site::choose_remote(util::env_value("ORCHESTRATE_REMOTE").c_str(), config.get());
  DeployContext deploy{.tier = tier.name,
                       .remote_url = remote ? std::optional(remote->url) : std::nullopt,
                       .image_state = request.image_state.empty() ? site::image_state_path() : request.image_state,
                       .push = request.push,
                       .temp_dir = site::store_root(request.store_root) / "tmp"};
  K8sRender out;
  YAML::Emitter y;
  for (const PlanEntry& entry : planned.plans) {
    const std::string recipe = entry.recipe->name;
    if (request.only == K8sOnly::smoke) {
      // Smoke Jobs only: no build Job, so nothing of the build to reach a pod.
    } else if (!entry.ok || !entry.image) {
      out.notes.push_back("no build Job for " + recipe + "/" + tier.name + ": " +
                          (entry.ok ? "no image serves its toolkit" : "the plan is unsatisfiable"));
    } else {
      const auto image = deployable_image(entry, deploy);
      const auto source = deployable_source(entry, deploy);
      if (image && source) {
        K8sJob build{.name = k8s_name("orc-build-" + recipe + "-" + tier.name),
                     .work = "build",
                     .recipe = recipe,
                     .tier = tier.name,
                     .image = *image,
                     .source = *source};
        emit_job(y, build, request);
        out.jobs.push_back(std::move(build));
      }
    }
    if (request.only == K8sOnly::build) continue;
    std::optional<std::pair<std::string, cache::Manifest>> set;
    if (store) set = newest_set(*store, recipe, tier.name, out.notes);
    if (!set) {
      out.notes.push_back("no smoke Job for " + recipe + "/" + tier.name +
                          ": no verified set of it here (build it, or pull it, then render again)");
      continue;
    }
    std::vector<arch::Targets> binaries;
    for (const auto& f : set->second.files)
      if (!f.embedded_sass.empty() || !f.embedded_ptx.empty())
        binaries.push_back({.sass = f.embedded_sass.ccs(), .ptx = f.embedded_ptx.ccs()});
    const auto intervals = arch::runnable_on(binaries);
    const auto needs = site::set_needs(set->second);
    std::vector<cache::LibraryNeed> needed;
    for (const auto& n : needs) needed.push_back(n.need);
    const auto toolkit = util::Version::parse(set->second.toolkit);
    for (std::size_t i = 0; i < selectors.size(); ++i) {
      const auto& sel = selectors[i];
      std::string suffix;
      if (selectors.size() > 1)
        suffix = "-sm" + sel.at("nvidia.com/gpu.compute.major") + sel.at("nvidia.com/gpu.compute.minor");
      K8sJob smoke{.name = k8s_name("orc-smoke-" + recipe + "-" + tier.name + suffix),
                   .work = "smoke",
                   .recipe = recipe,
                   .tier = tier.name,
                   .image = request.tool_image,
                   .node_selector = sel,
                   .require_cuda = toolkit ? "cuda>=" + toolkit->truncated(2).str() : std::string(),
                   .require_arch = arch::require_arch(intervals),
                   .set = set->first,
                   .needs = needed};
      if (smoke.require_arch.empty()) {
        out.notes.push_back("no smoke Job for " + recipe + "/" + tier.name +
                            ": its files have no device code in "
                            "common that runs on any GPU");
        break;
      }
      emit_job(y, smoke, request);
      out.jobs.push_back(std::move(smoke));
    }
    // The container toolkit mounts the driver's libraries, nothing else.
    const bool smoked = !out.jobs.empty() && out.jobs.back().work == "smoke" && out.jobs.back().recipe == recipe;
    for (const auto& n : smoked ? needs : std::vector<site::SetNeed>{})
      out.notes.push_back("smoke " + recipe + "/" + tier.name + ": the set needs " + site::describe(n.need) +
                          ", which it does not carry; " + request.tool_image + " must provide it");
  }
  if (!deploy.problems.empty()) {
    std::vector<util::Diagnostic> diagnostics;
    for (const auto& p : deploy.problems) diagnostics.push_back({.message = "k8s render " + tier.name + ": " + p});
    throw util::Failure(ExitCode::bad_input, std::move(diagnostics));
  }
  out.shipped = deploy.shipped;
  std::string head =
      comment_lines("orchestrate k8s render " + tier.name + " (orchestrate " + std::string(orc::k_version) + ")");
  head += comment_lines("Needs: ConfigMap " + request.config_map + " (kubectl create configmap " + request.config_map +
                        " --from-file=orchestrate.yaml), Secret " + request.registry_secret +
                        " with key remote (the remote URL, credentials in it), Secret orchestrate-keys (the signing "
                        "keys a job signs with and trusts)");
  for (const auto& n : out.notes) head += comment_lines(n);
  out.yaml = head + y.c_str() + (out.jobs.empty() ? "" : "\n");
  return out;
}

}  // namespace orc::app
