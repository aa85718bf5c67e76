#include "orchestrator/app/plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "orchestrator/app/images.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/compat/resolver.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using util::Diagnostic;
using util::ExitCode;

recipe::Config load_or_fail(const std::filesystem::path& file) {
  auto config = recipe::load_config(file);
  if (!config) throw util::Failure(ExitCode::bad_input, std::move(config.error()));
  return std::move(*config);
}

template <typename T, typename NameOf>
void check_names(const std::vector<std::string>& wanted, const std::vector<T>& have, NameOf name_of,
                 std::string_view what, const std::filesystem::path& file) {
  std::vector<std::string> names;
  for (const auto& item : have) names.emplace_back(name_of(item));
  std::vector<Diagnostic> errors;
  for (const auto& w : wanted) {
    if (std::ranges::find(names, w) != names.end()) continue;
    errors.push_back(Diagnostic{.message = std::string("no ") + std::string(what) + " '" + w + "' in " + file.string(),
                                .suggestion = util::did_you_mean(w, names)});
  }
  if (!errors.empty()) throw util::Failure(ExitCode::bad_input, std::move(errors));
}

compat::ResolveRequest request_for(const recipe::Config& config, const recipe::Recipe& r, const recipe::Tier& tier,
                                   const std::optional<std::vector<util::Version>>& toolkits) {
  compat::ResolveRequest request;
  for (const auto& g : tier.gpus) request.gpus.push_back({g.name, g.cc});
  request.ptx = tier.ptx;
  const auto constraint = [](const std::optional<recipe::Requirement>& req,
                             std::string origin) -> std::optional<compat::RangeConstraint> {
    if (!req) return std::nullopt;
    return compat::RangeConstraint{req->range, std::move(origin)};
  };
  request.cuda = constraint(r.requires_.cuda, "recipe requires cuda");
  request.cudnn = constraint(r.requires_.cudnn, "recipe requires cudnn");
  request.gcc = constraint(r.requires_.gcc, "recipe requires gcc");
  request.needs_cudnn = recipe::framework_uses_cudnn(r.framework);
  request.driver = tier.driver;
  request.candidates = toolkits ? *toolkits : config.toolkits;
  return request;
}

// What the image choice of every plan depends on, found once per run: the
// site's preference and the toolkit the host-mount image would serve.
struct ImageContext {
  compat::ImagePreference preference = compat::ImagePreference::offline_first;
  std::optional<compat::HostCuda> host;
};

ImageContext image_context() {
  ImageContext context;
  if (const auto env = util::env_get("ORCHESTRATE_IMAGE_PREFERENCE")) {
    const auto preference = compat::parse_image_preference(*env);
    if (!preference)
      throw util::Failure(ExitCode::bad_input,
                          "ORCHESTRATE_IMAGE_PREFERENCE is '" + *env + "'; expected 'offline' or 'official'");
    context.preference = *preference;
  }
  context.host = detect_host_cuda();
  return context;
}

// The plan's image. Offline-first means this site has no registry, so an
// official tag is no image it can use: the plan says which one a site with
// a registry would use instead.
void choose_plan_image(PlanEntry& e, const compat::Resolution& res, const ImageContext& context) {
  const auto choice = compat::choose_image(*res.toolkit, res.cudnn, context.preference, context.host);
  const std::string cuda = res.toolkit->version.str();
  if (!choice) {
    e.warnings.push_back("no build image serves CUDA " + cuda +
                         ": neither an offline image (orchestrate images list) nor an nvidia/cuda tag");
    return;
  }
  if (context.preference == compat::ImagePreference::offline_first && choice->source == compat::ImageSource::official) {
    const std::string host = context.host ? "the host's toolkit is " + context.host->toolkit.str()
                                          : std::string("no toolkit found at ORCHESTRATE_HOST_CUDA or /usr/local/cuda");
    e.warnings.push_back("no offline image serves CUDA " + cuda + " (" + host + "); with registry access use " +
                         choice->reference +
                         " (images/official/Dockerfile.cuda, ORCHESTRATE_IMAGE_PREFERENCE=official)");
    return;
  }
  e.image = choice->reference;
  for (const auto& note : choice->notes) e.warnings.push_back("image: " + note);
}

PlanEntry plan_one(const recipe::Config& config, const recipe::Recipe& r, const recipe::Tier& tier,
                   const ImageContext& images, const std::optional<std::vector<util::Version>>& toolkits) {
  PlanEntry e;
  e.recipe = r.name;
  e.framework = std::string(recipe::framework_name(r.framework));
  e.tier = tier.name;
  e.ptx_policy = std::string(recipe::ptx_policy_name(tier.ptx));
  for (const auto& g : tier.gpus) e.gpus.push_back({g.name, g.cc.dotted()});

  const auto outcome = compat::resolve(request_for(config, r, tier, toolkits));
  if (const auto* u = std::get_if<compat::Unsatisfiable>(&outcome)) {
    e.reasons = u->reasons;
    if (!u->split_hint.empty()) e.reasons.push_back(u->split_hint);
    e.split = u->split;
    return e;
  }
  const auto& res = std::get<compat::Resolution>(outcome);
  e.ok = true;
  e.toolkit = res.toolkit->version.str();
  if (res.cudnn) e.cudnn = res.cudnn->version.str();
  e.sass = res.archs.sass_names();
  e.ptx = res.archs.ptx_names();
  e.nvcc_flags = flags::nvcc_gencode(res.archs);
  e.reasons = res.reasons;
  e.warnings = res.warnings;
  choose_plan_image(e, res, images);

  flags::EmitContext context{.cuda = res.toolkit->version, .cudnn = std::nullopt, .framework = std::nullopt};
  if (res.cudnn) context.cudnn = res.cudnn->version;
  if (r.requires_.framework && r.requires_.framework->range.lower())
    context.framework = r.requires_.framework->range.lower()->version;
  const flags::Emitter* emitter = flags::find_emitter(recipe::framework_name(r.framework));
  if (!emitter) throw util::Failure(ExitCode::bad_input, "no arch emitter for framework " + e.framework);
  auto emitted = emitter->emit(res.archs, context);
  e.env = std::move(emitted.env);
  e.warnings.insert(e.warnings.end(), emitted.warnings.begin(), emitted.warnings.end());
  return e;
}

// Tier name -> the recipes (of `wanted`, or all when it is empty) that list
// it, in declaration order. Built once, so a plan is linear in the tiers
// recipes name rather than tiers x recipes x their tiers (125,000 tiers of
// one recipe took 33 s).
std::unordered_map<std::string_view, std::vector<const recipe::Recipe*>> recipes_by_tier(
    const recipe::Config& config, const std::vector<std::string>& wanted) {
  std::unordered_map<std::string_view, std::vector<const recipe::Recipe*>> out;
  for (const auto& r : config.recipes) {
    if (!wanted.empty() && std::ranges::find(wanted, r.name) == wanted.end()) continue;
    for (const auto& t : r.tiers) out[t].push_back(&r);
  }
  return out;
}

}  // namespace

bool PlanReport::all_ok() const {
  return std::ranges::all_of(plans, [](const PlanEntry& e) { return e.ok; });
}

PlanReport plan(const PlanRequest& request) {
  const recipe::Config config = load_or_fail(request.config);
  check_names(
      request.tiers, config.tiers, [](const recipe::Tier& t) { return t.name; }, "tier", request.config);
  check_names(
      request.recipes, config.recipes, [](const recipe::Recipe& r) { return r.name; }, "recipe", request.config);

  PlanReport report;
  report.config_warnings = config.warnings;
  const ImageContext images = image_context();
  // Tier order as declared, recipes in declaration order within each tier.
  const auto by_tier = recipes_by_tier(config, request.recipes);
  for (const auto& tier : config.tiers) {
    if (!request.tiers.empty() && std::ranges::find(request.tiers, tier.name) == request.tiers.end()) continue;
    const auto recipes = by_tier.find(tier.name);
    if (recipes == by_tier.end()) continue;
    for (const recipe::Recipe* r : recipes->second)
      report.plans.push_back(plan_one(config, *r, tier, images, request.toolkits));
  }
  return report;
}

std::string render_plan_json(const PlanReport& report) {
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  for (const auto& e : report.plans) {
    nlohmann::ordered_json j;
    j["recipe"] = e.recipe;
    j["framework"] = e.framework;
    j["tier"] = e.tier;
    j["status"] = e.ok ? "ok" : "unsatisfiable";
    j["gpus"] = nlohmann::ordered_json::array();
    for (const auto& g : e.gpus) j["gpus"].push_back({{"name", g.name}, {"cc", g.cc}});
    j["ptx_policy"] = e.ptx_policy;
    j["toolkit"] = e.toolkit ? nlohmann::ordered_json(*e.toolkit) : nlohmann::ordered_json(nullptr);
    j["cudnn"] = e.cudnn ? nlohmann::ordered_json(*e.cudnn) : nlohmann::ordered_json(nullptr);
    j["image"] = e.image ? nlohmann::ordered_json(*e.image) : nlohmann::ordered_json(nullptr);
    j["sass"] = e.sass;
    j["ptx"] = e.ptx;
    j["env"] = nlohmann::ordered_json::object();
    for (const auto& v : e.env) j["env"][v.name] = v.value;
    j["nvcc_flags"] = e.nvcc_flags;
    j["reasons"] = e.reasons;
    j["warnings"] = e.warnings;
    if (!e.ok) j["split"] = e.split;
    plans.push_back(std::move(j));
  }
  nlohmann::ordered_json root;
  root["plans"] = std::move(plans);
  return root.dump(2) + "\n";
}

std::string render_plan_text(const PlanReport& report, bool explain) {
  std::string out;
  std::string current_tier;
  for (const auto& e : report.plans) {
    if (e.tier != current_tier) {
      current_tier = e.tier;
      std::vector<std::string> gpus;
      for (const auto& g : e.gpus) gpus.push_back(g.name == g.cc ? "CC " + g.cc : g.name + " " + g.cc);
      if (!out.empty()) out += '\n';
      out += "tier " + e.tier + ": " + util::join(gpus, ", ") + " (ptx: " + e.ptx_policy + ")\n";
    }
    out += "  " + e.recipe + " [" + e.framework + "]: ";
    if (!e.ok) {
      out += "UNSATISFIABLE\n";
      for (const auto& r : e.reasons) out += "      - " + r + '\n';
      continue;
    }
    out += "CUDA " + *e.toolkit;
    if (e.cudnn) out += ", cuDNN " + *e.cudnn;
    out += "; SASS " + util::join(e.sass, " ");
    out += "; PTX " + (e.ptx.empty() ? std::string("none") : util::join(e.ptx, " ")) + '\n';
    if (e.image) out += "      image: " + *e.image + '\n';
    for (const auto& v : e.env) out += "      " + v.name + "=" + v.value + '\n';
    if (explain)
      for (const auto& r : e.reasons) out += "      because: " + r + '\n';
    for (const auto& w : e.warnings) out += "      warning: " + w + '\n';
  }
  if (report.plans.empty()) out += "no recipe x tier to plan\n";
  return out;
}

}  // namespace orc::app
