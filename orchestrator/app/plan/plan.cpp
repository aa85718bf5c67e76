#include "orchestrator/app/plan/plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

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
  // As images' detect_host_cuda(), with nvcc's answer remembered by its file's identity.
  const std::string root = util::env_value("ORCHESTRATE_HOST_CUDA");
  const std::string host_root = !root.empty() ? root : std::string(compat::k_default_host_cuda);
  if (auto version = site::nvcc_version(host_root, site::nvcc_version_cache()))
    context.host = compat::HostCuda{.toolkit = *version, .root = host_root};
  return context;
}

// The plan's image. Offline-first means this site has no registry, so an
// official tag is no image it can use: the plan says which one a site with
// a registry would use instead.
void choose_plan_image(PlanEntry& e, const ImageContext& context) {
  auto choice = compat::choose_image(*e.toolkit, e.cudnn, context.preference, context.host);
  const std::string cuda = e.toolkit->version.str();
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
    e.image_needs_registry = true;
    e.image = std::move(choice);
    return;
  }
  for (const auto& note : choice->notes) e.warnings.push_back("image: " + note);
  e.image = std::move(choice);
}

flags::Emitted emit_framework(const recipe::Recipe& r, const compat::Toolkit& toolkit,
                              const compat::CudnnRelease* cudnn, const arch::ArchSet& archs) {
  flags::EmitContext context{.cuda = toolkit.version, .cudnn = std::nullopt, .framework = std::nullopt};
  if (cudnn) context.cudnn = cudnn->version;
  if (r.requires_.framework && r.requires_.framework->range.lower())
    context.framework = r.requires_.framework->range.lower()->version;
  return flags::framework_info(r.framework).emit(archs, context);
}

PlanEntry plan_one(const recipe::Config& config, const recipe::Recipe& r, const recipe::Tier& tier,
                   const ImageContext& images, const std::optional<std::vector<util::Version>>& toolkits) {
  PlanEntry e{.recipe = &r, .tier = &tier};
  auto outcome = compat::resolve(request_for(config, r, tier, toolkits));
  if (auto* u = std::get_if<compat::Unsatisfiable>(&outcome)) {
    e.reasons = std::move(u->reasons);
    if (!u->split_hint.empty()) e.reasons.push_back(u->split_hint);
    for (std::size_t i = 0; i < u->split.size(); ++i)
      e.split.push_back({.gpus = std::move(u->split[i]), .toolkit = u->split_toolkits.at(i)});
    return e;
  }
  auto& res = std::get<compat::Resolution>(outcome);
  e.ok = true;
  e.toolkit = res.toolkit;
  e.cudnn = res.cudnn;
  e.archs = res.archs;
  e.reasons = std::move(res.reasons);
  e.warnings = std::move(res.warnings);
  choose_plan_image(e, images);
  e.framework = emit_framework(r, *e.toolkit, e.cudnn, e.archs);
  e.warnings.insert(e.warnings.end(), e.framework.warnings.begin(), e.framework.warnings.end());
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

std::shared_ptr<const recipe::Config> load_plan_config(const std::filesystem::path& file) {
  return std::make_shared<const recipe::Config>(load_or_fail(file));
}

PlanReport plan(std::shared_ptr<const recipe::Config> shared, const PlanScope& scope) {
  const recipe::Config& config = *shared;
  check_names(
      scope.tiers, config.tiers, [](const recipe::Tier& t) { return t.name; }, "tier", config.file);
  check_names(
      scope.recipes, config.recipes, [](const recipe::Recipe& r) { return r.name; }, "recipe", config.file);

  PlanReport report;
  report.config_warnings = config.warnings;
  const ImageContext images = image_context();
  // Tier order as declared, recipes in declaration order within each tier.
  const auto by_tier = recipes_by_tier(config, scope.recipes);
  for (const auto& tier : config.tiers) {
    if (!scope.tiers.empty() && std::ranges::find(scope.tiers, tier.name) == scope.tiers.end()) continue;
    const auto recipes = by_tier.find(tier.name);
    if (recipes == by_tier.end()) continue;
    for (const recipe::Recipe* r : recipes->second)
      report.plans.push_back(plan_one(config, *r, tier, images, scope.toolkits));
  }
  report.config = std::move(shared);
  return report;
}

PlanReport plan(const PlanRequest& request) {
  return plan(load_plan_config(request.config), PlanScope{.tiers = request.tiers, .recipes = request.recipes});
}

std::string plan_name(const PlanEntry& e) { return e.recipe->name + "/" + e.tier->name; }

std::vector<GroupedWarning> PlanReport::grouped_warnings() const {
  std::vector<GroupedWarning> out;
  for (const auto& e : plans)
    for (const auto& w : e.warnings) {
      auto it = std::ranges::find(out, w, &GroupedWarning::text);
      if (it == out.end()) it = out.insert(out.end(), GroupedWarning{.text = w, .plans = {}});
      if (std::ranges::find(it->plans, plan_name(e)) == it->plans.end()) it->plans.push_back(plan_name(e));
    }
  return out;
}

namespace {

using Json = nlohmann::ordered_json;

template <typename T, typename Text>
Json or_null(const T* value, Text text) {
  return value ? Json(text(*value)) : Json(nullptr);
}

std::string version_of_toolkit(const compat::Toolkit& t) { return t.version.str(); }
std::string version_of_cudnn(const compat::CudnnRelease& c) { return c.version.str(); }

// The image the plan shows: none when only an official tag serves an
// offline-first site (its warning names the tag).
const compat::ImageChoice* shown_image(const PlanEntry& e) {
  return e.image && !e.image_needs_registry ? &*e.image : nullptr;
}

Json host_json(const PlanEntry& e) {
  if (!e.host) return Json(nullptr);
  Json j;
  j["toolkit"] = e.host->toolkit.version.str();
  j["root"] = e.host->toolkit.root.string();
  j["instead_of"] = or_null(e.host->instead_of, version_of_toolkit);
  return j;
}

Json plan_json(const PlanEntry& e) {
  Json j;
  j["recipe"] = e.recipe->name;
  j["framework"] = recipe::framework_name(e.recipe->framework);
  j["tier"] = e.tier->name;
  j["status"] = e.ok ? "ok" : "unsatisfiable";
  j["gpus"] = Json::array();
  for (const auto& g : e.tier->gpus) j["gpus"].push_back({{"name", g.name}, {"cc", g.cc.dotted()}});
  j["ptx_policy"] = recipe::ptx_policy_name(e.tier->ptx);
  j["toolkit"] = or_null(e.toolkit, version_of_toolkit);
  j["cudnn"] = or_null(e.cudnn, version_of_cudnn);
  j["image"] = or_null(shown_image(e), [](const compat::ImageChoice& i) { return i.reference; });
  j["host"] = host_json(e);
  j["sass"] = e.archs.sass_names();
  j["ptx"] = e.archs.ptx_names();
  j["env"] = Json::object();
  if (e.ok)
    for (const auto& v : e.framework.env) j["env"][v.name] = v.value;
  j["nvcc_flags"] = flags::nvcc_gencode(e.archs);
  j["reasons"] = e.reasons;
  j["warnings"] = e.warnings;
  if (!e.ok) {
    j["split"] = Json::array();
    for (const auto& part : e.split)
      j["split"].push_back({{"gpus", part.gpus}, {"toolkit", or_null(part.toolkit, version_of_toolkit)}});
  }
  return j;
}

}  // namespace

std::string render_plan_json(const PlanReport& report) {
  Json plans = Json::array();
  for (const auto& e : report.plans) plans.push_back(plan_json(e));
  Json root;
  root["plans"] = std::move(plans);
  // The configuration's own warnings, as stderr shows them (file:line: text).
  root["warnings"] = Json::array();
  for (const auto& w : report.config_warnings)
    root["warnings"].push_back({{"file", w.where.file.empty() ? Json(nullptr) : Json(w.where.file)},
                                {"line", w.where.line ? Json(w.where.line) : Json(nullptr)},
                                {"column", w.where.col ? Json(w.where.col) : Json(nullptr)},
                                {"message", w.message}});
  return root.dump(2) + "\n";
}

namespace {

constexpr std::size_t k_text_width = 100;

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// `text` broken at spaces into lines of at most k_text_width columns, each
// after `indent`; a word longer than a line stays whole.
std::string wrapped(std::string_view text, std::string_view first, std::string_view indent) {
  std::string out(first), line;
  std::size_t used = first.size();
  for (const auto& word : util::split_any(text, " ")) {
    if (used + line.size() + 1 + word.size() > k_text_width && !line.empty()) {
      out += line + "\n" + std::string(indent);
      used = indent.size();
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}

std::string tier_heading(const recipe::Tier& tier) {
  std::vector<std::string> gpus;
  for (const auto& g : tier.gpus) gpus.push_back(g.given_as_cc ? "CC " + g.cc.dotted() : g.name + " " + g.cc.dotted());
  return wrapped("tier " + tier.name + ": " + util::join(gpus, ", ") +
                     " (ptx: " + std::string(recipe::ptx_policy_name(tier.ptx)) + ")",
                 "", "    ");
}

// One plan's line: name and framework padded to `name_width`, then the
// resolution in aligned fields.
std::string plan_line(const PlanEntry& e, std::size_t name_width, bool explain) {
  std::string out =
      "  " +
      padded(e.recipe->name + " [" + std::string(recipe::framework_name(e.recipe->framework)) + "]", name_width) + "  ";
  const std::string indent(4, ' ');
  if (!e.ok) {
    out += "UNSATISFIABLE\n";
    for (const auto& r : e.reasons) out += wrapped(r, indent + "- ", indent + "  ");
    return out;
  }
  out += padded("CUDA " + e.toolkit->version.str(), 10);
  out += padded(e.cudnn ? "cuDNN " + e.cudnn->version.str() : "", 11);
  out += "SASS " + util::join(e.archs.sass_names(), " ");
  const auto ptx = e.archs.ptx_names();
  out += "; PTX " + (ptx.empty() ? std::string("none") : util::join(ptx, " ")) + "\n";
  if (const auto* image = shown_image(e)) out += indent + "image: " + image->reference + "\n";
  if (e.host) {
    out += indent + "host toolkit: " + e.host->toolkit.version.str() + " (" + e.host->toolkit.root.string() + ")\n";
  }
  for (const auto& v : e.framework.env) out += wrapped(v.name + "=" + v.value, indent, indent + "  ");
  if (explain)
    for (const auto& r : e.reasons) out += wrapped(r, indent + "because: ", indent + "  ");
  return out;
}

}  // namespace

std::string render_plan_text(const PlanReport& report, bool explain) {
  std::size_t name_width = 0;
  for (const auto& e : report.plans)
    name_width = std::max(name_width, e.recipe->name.size() + recipe::framework_name(e.recipe->framework).size() + 3);
  std::string out;
  const recipe::Tier* current = nullptr;
  for (const auto& e : report.plans) {
    if (e.tier != current) {
      current = e.tier;
      if (!out.empty()) out += '\n';
      out += tier_heading(*e.tier);
    }
    out += plan_line(e, name_width, explain);
  }
  if (report.plans.empty()) out += "no recipe x tier to plan\n";
  // Each warning once, with the plans it concerns.
  const auto warnings = report.grouped_warnings();
  if (!warnings.empty()) out += '\n';
  for (const auto& w : warnings) {
    out += wrapped(w.text, "warning: ", "    ");
    out += wrapped(util::join(w.plans, ", "), "    for ", "        ");
  }
  return out;
}

}  // namespace orc::app
