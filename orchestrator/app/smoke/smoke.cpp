#include "orchestrator/app/smoke/smoke.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <ostream>
#include <random>
#include <sstream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/smoke/smoke_attest.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/inspect/verdict.hpp"
#include "orchestrator/site/arch_coverage.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/driver_facts.hpp"
#include "orchestrator/site/machine_key.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/site/store_root.hpp"
#include "orchestrator/smoke/artifact.hpp"
#include "orchestrator/smoke/runner.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;
using util::ExitCode;

constexpr std::string_view k_kernels_source = "smoke_kernels.cu";
constexpr std::string_view k_kernels_fatbin = "smoke_kernels.fatbin";

std::string yaml_quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The file's bytes with a NUL after them: the driver reads PTX text as a C
// string, and a fatbin or cubin does not mind the extra byte.
std::vector<std::byte> read_image(const fs::path& path) {
  const auto read = util::read_file(path, util::k_no_read_cap);
  if (!read) util::fail_input(util::SourceLocation{.file = path.string()}, "cannot read the fatbin");
  const std::string& chars = *read;
  std::vector<std::byte> bytes(chars.size() + 1, std::byte{0});
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// The set `build` answered last for recipe x tier (or `promote` named), as
// push and fetch --tier hand it out.
SmokedSet current_smoked_set(const cache::Store& store, const std::string& recipe, const recipe::Tier& tier) {
  auto current = cache::current_set(store, recipe, tier.name);
  if (!current) site::fail_with(current.error());
  if (!current->entry)
    util::fail_input("no verified artifact set of " + recipe + " for tier " + tier.name + " in " +
                     store.root().string() + ": build it first (orchestrate build " + tier.name + " --recipe " +
                     recipe + ")");
  SmokedSet used{.recipe = recipe, .set = current->entry->manifest, .recorded = current->recorded};
  if (current->newer) used.newer = current->newer->manifest;
  used.stale = current->stale;
  return used;
}

}  // namespace

std::string describe_current(const SmokedSet& used, const std::string& tier) {
  std::string text = used.recipe + ": the current set for " + tier + " is " + used.set.to_string();
  if (!used.recorded) text += " (none recorded: the newest verified set stands in)";
  if (used.stale) text += " (the recorded " + used.stale->to_string() + " is no longer in the store)";
  if (used.newer)
    text += "; a newer set by time, " + used.newer->to_string() + ", is not current ('orchestrate promote " +
            used.recipe + " --tier " + tier + " --digest " + used.newer->to_string() + "' makes it so)";
  return text;
}

namespace {

// Builds kernels/ for the tier through app::build and returns the stored
// fatbin's path.
fs::path build_kernels(const recipe::Config& config, const recipe::Tier& tier, const SmokeRequest& request,
                       std::ostream& progress, std::optional<digest::Digest>& manifest) {
  const fs::path kernels = request.kernels_dir.empty() ? kernels_dir() : request.kernels_dir;
  if (!fs::exists(kernels / k_kernels_source))
    util::fail_input(util::SourceLocation{.file = (kernels / k_kernels_source).string()},
                     "the smoke kernels' source is missing (set ORCHESTRATE_KERNELS_DIR)");
  // The recipe is keyed by its text, not by this file's name, so a fresh
  // name per run still hits the cache.
  const fs::path file = fs::temp_directory_path() / ("orchestrate-smoke-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << smoke_config_yaml(config, tier, kernels);
  BuildReport report;
  try {
    report = build(BuildRequest{.config = file,
                                .tiers = {tier.name},
                                .recipes = {std::string(k_smoke_recipe)},
                                .engine = request.engine,
                                .store_root = request.store_root},
                   progress);
  } catch (...) {
    fs::remove(file);
    throw;
  }
  fs::remove(file);
  const BuildResult& built = report.builds.at(0);
  if (built.exit_code != ExitCode::ok)
    throw util::Failure(
        built.exit_code == ExitCode::outside_failure ? ExitCode::outside_failure : ExitCode::check_failed,
        "building the smoke kernels for tier " + tier.name + " failed: " + util::join(built.errors, "; ") +
            (built.log_file.empty() ? "" : " (log: " + built.log_file + ")"));
  manifest = built.manifest;
  for (const auto& a : built.artifacts)
    if (fs::path(a.name).filename() == k_kernels_fatbin) return a.path;
  throw util::Failure(ExitCode::check_failed, "the smoke kernels' build left no " + std::string(k_kernels_fatbin));
}

// Notes for a GPU that is not one the tier declares: the run still proves
// something, but not about the tier.
void note_tier_membership(smoke::GpuResult& gpu, const recipe::Tier* tier) {
  if (!tier) return;
  if (!site::tier_has_cc(*tier, gpu.cc))
    gpu.notes.push_back("CC " + gpu.cc.dotted() + " is not the compute capability of any GPU of tier " + tier->name);
}

void load_artifacts(const smoke::Driver& driver, smoke::GpuResult& gpu, const std::vector<fs::path>& artifacts,
                    const inspect::DriverFacts& facts) {
  for (const auto& path : artifacts) {
    const std::size_t found = smoke::for_each_fatbin(path, [&](const smoke::EmbeddedFatbin& f) {
      smoke::ArtifactLoad load{.where = f.where,
                               .size = f.bytes.size(),
                               .predicted = "unknown",
                               .load = {},
                               .kernels = f.kernels != inspect::Kernels::no};
      if (gpu.cc_known)
        load.predicted =
            std::string(inspect::outcome_name(inspect::judge(f.sass, f.ptx_images, gpu.cc, facts).outcome));
      load.load = driver.observe_load(gpu.ordinal, f.bytes, {}, smoke::Loader::library);
      if (load.load.outcome == smoke::LoadOutcome::none && gpu.cc_known && !f.relocatable.empty()) {
        const inspect::ModuleVerdict v = inspect::judge_module(f.module, f.relocatable, gpu.cc, facts);
        load.relinked =
            v.relinked && (v.verdict.outcome == inspect::Outcome::native || v.verdict.outcome == inspect::Outcome::jit);
      }
      gpu.artifacts.push_back(std::move(load));
    });
    if (found == 0) gpu.notes.push_back(path.string() + " embeds no fatbin or cubin: nothing to load");
  }
}

}  // namespace

fs::path kernels_dir() {
  if (auto dir = util::env_get("ORCHESTRATE_KERNELS_DIR")) return *dir;
  // This file is orchestrator/app/smoke.cpp of the source tree.
  return fs::path(__FILE__).parent_path().parent_path().parent_path() / "kernels";
}

std::string smoke_config_yaml(const recipe::Config& config, const recipe::Tier& tier, const fs::path& kernels) {
  std::ostringstream y;
  y << "# Written by `orchestrate smoke` for one run: the tier of " << config.file.string() << "\n";
  if (!config.toolkits.empty()) {
    std::vector<std::string> versions;
    for (const auto& v : config.toolkits) versions.push_back(yaml_quoted(v.str()));
    y << "toolkits: [" << util::join(versions, ", ") << "]\n";
  }
  std::vector<std::string> gpus;
  for (const auto& g : tier.gpus)
    gpus.push_back(g.declared ? "{name: " + yaml_quoted(g.name) + ", cc: " + yaml_quoted(g.cc.dotted()) + "}"
                              : yaml_quoted(g.given_as_cc ? g.cc.dotted() : g.name));
  y << "tiers:\n  " << tier.name << ":\n    gpus: [" << util::join(gpus, ", ") << "]\n";
  y << "    ptx: " << recipe::ptx_policy_name(tier.ptx) << "\n";
  if (tier.driver) y << "    driver: " << yaml_quoted(tier.driver->str()) << "\n";
  y << "recipes:\n"
    << "  - name: " << k_smoke_recipe << "\n"
    << "    framework: nvcc\n"
    << "    source: {path: " << yaml_quoted(kernels.string()) << "}\n"
    << "    tiers: [" << tier.name << "]\n"
    << "    build:\n"
    << "      - [nvcc, -fatbin, -O3, -o, " << k_kernels_fatbin << ", " << k_kernels_source << "]\n"
    << "    artifacts: [" << yaml_quoted(k_kernels_fatbin) << "]\n";
  return y.str();
}

SmokeOutput run_smoke(const SmokeRequest& request, std::ostream& progress) {
  SmokeOutput out;
  smoke::SmokeResult& r = out.result;
  r.tier = request.tier;
  // Bad input is reported as such before anything else, GPU or not.
  std::optional<recipe::Config> config;
  const recipe::Tier* tier = nullptr;
  if (!request.tier.empty()) {
    config = site::load_config_file(request.config, true);
    tier = &site::tier_or_fail(*config, request.tier);
  }
  for (const auto& a : request.artifacts)
    if (!fs::exists(a)) util::fail_input(util::SourceLocation{.file = a.string()}, "no such artifact");
  // A run counts for a tier only on a GPU of the tier, so attesting needs
  // the tier's definition, not only the name a set was built for.
  if (!request.artifact_sets.empty() && !tier)
    util::fail_input("attesting a stored artifact set needs its TIER: orchestrate smoke TIER --artifact sha256:...");
  if (!request.recipes.empty() && !tier) util::fail_input("smoke --recipe R needs the TIER whose current set it tests");
  for (const auto& name : request.recipes) (void)site::recipe_or_fail(*config, name);
  std::optional<cache::Store> store;
  std::vector<AttestTarget> targets;
  std::vector<fs::path> artifacts = request.artifacts;
  if (!request.artifact_sets.empty() || !request.recipes.empty()) {
    const fs::path root = site::store_root(request.store_root);
    auto opened = cache::Store::open(root);
    if (!opened)
      site::fail_with(
          {opened.error().kind, "cannot open the local store at " + root.string() + ": " + opened.error().message});
    store.emplace(std::move(*opened));
    for (const auto& prefix : request.artifact_sets) {
      targets.push_back(resolve_artifact_set(*store, prefix));
      artifacts.insert(artifacts.end(), targets.back().files.begin(), targets.back().files.end());
    }
    for (const auto& name : request.recipes) {
      out.current_sets.push_back(current_smoked_set(*store, name, *tier));
      const SmokedSet& used = out.current_sets.back();
      progress << "smoke: " << describe_current(used, tier->name) << "\n";
      targets.push_back(resolve_artifact_set(*store, used.set.to_string()));
      artifacts.insert(artifacts.end(), targets.back().files.begin(), targets.back().files.end());
    }
  }
  std::vector<std::byte> image;
  if (request.fatbin) image = read_image(*request.fatbin);

  auto driver = smoke::Driver::open({.soname = request.driver_library});
  if (!driver) {
    r.driver_error = driver.error();
    return out;
  }
  r.driver_version = smoke::kernel_driver_version();
  r.driver_cuda_version = driver->cuda_version();

  const fs::path fatbin =
      request.fatbin ? *request.fatbin : build_kernels(*config, *tier, request, progress, out.build_manifest);
  if (!request.fatbin) image = read_image(fatbin);
  r.fatbin = fatbin.string();
  r.fatbin_sha256 = digest::sha256(std::span(image).first(image.size() - 1)).hex();
  r.seed = std::random_device{}();
  const inspect::DriverFacts facts = site::driver_facts(site::node_driver(r.driver_version, r.driver_cuda_version));
  for (const auto& gpu : driver->gpus()) {
    smoke::GpuResult g = driver->smoke(gpu.ordinal, image, r.seed);
    note_tier_membership(g, tier);
    load_artifacts(*driver, g, artifacts, facts);
    r.gpus.push_back(std::move(g));
  }
  if (!targets.empty() && r.exit_code() != ExitCode::outside_failure) {
    const auto key = site::machine_signing_key([&progress](const std::string& line) { progress << line << "\n"; });
    if (!key)
      throw util::Failure(ExitCode::outside_failure,
                          "the smoke runs were not attested: each run is signed by the node that ran it, and this "
                          "node has no signing key");
    const AttestingNode node{.host = site::node_hostname(), .key = *key};
    for (const auto& target : targets) {
      const digest::Digest attested = attest_artifact_set(*store, target, r, *tier, node);
      out.attestations.push_back(attested.to_string() + " attests " + target.entry.manifest.to_string() + " (" +
                                 target.entry.recipe + ") for tier " + tier->name + ": " +
                                 (r.exit_code() == ExitCode::ok ? "pass" : "fail"));
      progress << "smoke: " << out.attestations.back() << "\n";
    }
  }
  return out;
}

}  // namespace orc::app
