#include "orchestrator/app/plan/plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string_view>
#include <unordered_map>

#include "orchestrator/compat/driver.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/compat/resolver.hpp"
#include "orchestrator/flags/tf_releases.hpp"
#include "orchestrator/flags/torch_releases.hpp"
#include "orchestrator/front/origin.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using util::Diagnostic;
using util::ExitCode;

recipe::Config load_or_fail(const std::filesystem::path& file) {
  return std::move(*site::load_config_file(file, true));
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
                                   const std::optional<std::vector<util::Version>>& toolkits,
                                   const compat::ToolkitTable* table) {
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
  request.needs_cudnn = recipe::framework_uses_cudnn(r.framework) && !r.requires_.without_cudnn;
  request.driver = tier.driver;
  request.candidates = toolkits ? *toolkits : config.toolkits;
  request.table = table;
  return request;
}

// What the image choice of every plan depends on, found once per run: the
// site's preference and the toolkit the host-mount image would serve.
struct ImageContext {
  const compat::ToolkitTable* table = &compat::ToolkitTable::known();  // the plan's rows
  compat::ImagePreference preference = compat::ImagePreference::offline_first;
  std::optional<compat::HostCuda> host;
  // Released toolkits something here can build with, oldest first, and what
  // provides each: an offline image of the catalog, the host's toolkit
  // (host-mount image), or under the official preference an nvidia/cuda tag.
  std::vector<std::pair<util::Version, std::string>> provided;
  // What the recipe needs of an image (parts_needed): an image lacking one
  // provides nothing for it.
  std::vector<compat::ToolkitPart> needed = compat::parts_needed({});
  // The offline images `images build` recorded here (site/image_state.hpp).
  std::vector<site::ImageRecord> built;
};

// What provides `toolkit` on this site, as the plan's image choice would
// take it; nullopt when nothing does (an official tag under offline-first
// is an image this site cannot pull).
std::optional<std::string> provider_of(const compat::Toolkit& toolkit, const ImageContext& context) {
  const auto choice = compat::choose_image(toolkit, nullptr, context.preference, context.host, context.needed);
  if (!choice) return std::nullopt;
  switch (choice->source) {
    case compat::ImageSource::official:
      if (context.preference == compat::ImagePreference::offline_first) return std::nullopt;
      return choice->reference;
    case compat::ImageSource::host_mount:
      return "the host's toolkit (" + context.host->root + ")";
    case compat::ImageSource::offline:
      return choice->reference;
  }
  return std::nullopt;
}

void find_providers(ImageContext& context) {
  for (const compat::Toolkit& t : context.table->rows())
    if (t.released)
      if (auto provider = provider_of(t, context)) context.provided.emplace_back(t.version, std::move(*provider));
}

ImageContext image_context(const compat::ToolkitTable& table) {
  ImageContext context;
  context.table = &table;
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
    context.host =
        compat::HostCuda{.toolkit = *version, .root = host_root, .inventory = site::inspect_toolkit_tree(host_root)};
  find_providers(context);
  context.built = site::read_image_state(site::image_state_path());
  return context;
}

// The context for a recipe that declares `needs:`: its providers found again
// with what it needs (most recipes declare none and share the run's).
ImageContext image_context_for(const ImageContext& shared, const recipe::Recipe& r) {
  ImageContext context = shared;
  context.needed = parts_needed(r);
  context.provided.clear();
  find_providers(context);
  return context;
}

// The plan's image. Offline-first means this site has no registry, so an
// official tag is no image it can use: the plan says which one a site with
// a registry would use instead.
void choose_plan_image(PlanEntry& e, const ImageContext& context) {
  auto choice = compat::choose_image(*e.toolkit, e.cudnn, context.preference, context.host, context.needed);
  const std::string cuda = e.toolkit->version.str();
  // The images passed over for lacking what the recipe needs, said with
  // whatever the plan does instead.
  const auto lacking = compat::images_lacking(*e.toolkit, context.host, context.needed);
  if (!lacking.empty()) e.notes.push_back("not planned: " + util::join(lacking, "; "));
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
  if (!std::ranges::any_of(context.built, [&](const auto& r) { return r.reference == choice->reference; }))
    e.image_to_build = compat::find_offline_image(choice->reference);
  e.image = std::move(choice);
}

// `release`: the framework release the plan resolved for (TensorFlow) or
// whose extension builder the archs need (PyTorch), else the lowest the
// recipe allows.
flags::Emitted emit_framework(const recipe::Recipe& r, const compat::Toolkit& toolkit,
                              const compat::CudnnRelease* cudnn, const arch::ArchSet& archs,
                              const std::optional<util::Version>& release) {
  flags::EmitContext context{.cuda = toolkit.version, .cudnn = std::nullopt, .framework = release};
  if (cudnn) context.cudnn = cudnn->version;
  if (!context.framework && r.requires_.framework && r.requires_.framework->range.lower())
    context.framework = r.requires_.framework->range.lower()->version;
  return flags::framework_info(r.framework).emit(archs, context);
}

std::string cc_list(const std::vector<arch::ComputeCapability>& ccs) {
  std::vector<std::string> out;
  for (const auto& cc : ccs) out.push_back(cc.dotted());
  return util::join(out, ", ");
}

// Whether a framework range allows some release of `minor` (x.y): ">=2.4.1"
// and "2.4.1" allow 2.4, which contains(2.4) alone would miss.
bool allows_release(const util::VersionRange& range, const util::Version& minor) {
  if (range.contains(minor)) return true;
  const auto& lower = range.lower();
  return lower && lower->version.truncated(2) == minor.truncated(2) && range.contains(lower->version);
}

// Whether PyTorch `release` has an official build for `toolkit` (by
// major.minor); true when the tables have no builds row for it.
bool torch_builds_for(const util::Version& release, const util::Version& toolkit) {
  for (const auto& row : flags::torch_cuda_builds())
    if (row.version == release.truncated(2))
      return std::ranges::any_of(row.cuda, [&](const auto& c) { return c == toolkit.truncated(2); });
  return true;
}

// A PyTorch recipe's archs against the releases its `pytorch:` range allows
// (flags::torch_releases): fine when the oldest of them accepts every one;
// a warning naming the release the build needs when a newer one of the range
// does; unsatisfiable, with the oldest release that would serve, when none
// does. Releases the tables lack are no evidence either way.
struct TorchCheck {
  std::vector<std::string> unsatisfiable;  // the reasons; empty when the plan stands
  std::vector<std::string> warnings;
  std::vector<std::string> explain;      // for --explain: the fact that decided
  std::optional<util::Version> release;  // the oldest release of the range that accepts the archs
};

TorchCheck check_torch_archs(const recipe::Recipe& r, const arch::ArchSet& archs, const compat::Toolkit& toolkit) {
  TorchCheck out;
  if (r.framework != flags::Framework::pytorch || !r.requires_.framework) return out;
  const util::VersionRange& range = r.requires_.framework->range;
  const std::set<arch::ComputeCapability> all = archs.all();
  const std::vector<arch::ComputeCapability> ccs(all.begin(), all.end());
  const auto accepts_all = [&](const flags::TorchRelease& t) { return flags::torch_rejects(t, ccs).empty(); };
  // The releases of the range that have an official build for the plan's
  // toolkit: the extension is built against one of those.
  std::vector<const flags::TorchRelease*> in_range;
  for (const auto& release : flags::torch_releases())
    if (allows_release(range, release.version) && torch_builds_for(release.version, toolkit.version))
      in_range.push_back(&release);
  if (in_range.empty()) {
    out.explain.push_back("no release of pytorch " + range.text() + " with a CUDA " + toolkit.version.str() +
                          " build has its TORCH_CUDA_ARCH_LIST in the tables (" +
                          "no source gave 2.8 to 2.10 or 2.12 on): the archs are checked against none");
    return out;
  }
  const flags::TorchRelease& oldest = *in_range.front();
  const auto serving = std::ranges::find_if(in_range, [&](const auto* t) { return accepts_all(*t); });
  if (serving != in_range.end()) out.release = (*serving)->version;
  if (serving == in_range.begin()) {
    out.explain.push_back("PyTorch " + oldest.version.str() + " (the oldest of pytorch " + range.text() +
                          " with a CUDA " + toolkit.version.str() + " build) accepts " + cc_list(ccs) +
                          " in TORCH_CUDA_ARCH_LIST (" + std::string(oldest.source) + ")");
    return out;
  }
  const std::string list = flags::torch_cuda_arch_list(archs);
  const std::string why = "PyTorch " + oldest.version.str() +
                          "'s extension builder (torch/utils/cpp_extension.py) rejects " +
                          cc_list(flags::torch_rejects(oldest, ccs)) + " in TORCH_CUDA_ARCH_LIST";
  if (serving != in_range.end()) {
    const flags::TorchRelease& needed = **serving;
    out.warnings.push_back("TORCH_CUDA_ARCH_LIST=" + list + " needs PyTorch " + needed.version.str() +
                           " or later: " + why);
    out.explain.push_back("PyTorch " + needed.version.str() + " is the oldest of pytorch " + range.text() +
                          " that accepts " + cc_list(ccs) + " (" + std::string(needed.source) + ")");
    return out;
  }
  out.unsatisfiable.push_back("pytorch " + range.text() + ": " + why + " (" + list + ")");
  const auto& table = flags::torch_releases();
  const auto any = std::ranges::find_if(table, accepts_all);
  out.unsatisfiable.push_back(any == table.end()
                                  ? "no PyTorch release in the tables accepts " + cc_list(ccs)
                                  : "the oldest PyTorch the tables know to accept them is " + any->version.str());
  return out;
}

// The request's candidates (empty = every released toolkit of its table)
// narrowed to `allowed`, by major.minor.
std::vector<util::Version> intersect_toolkits(const compat::ResolveRequest& request,
                                              const std::vector<util::Version>& allowed) {
  const auto& candidates = request.candidates;
  std::vector<util::Version> out;
  for (const auto& v : allowed) {
    const compat::Toolkit* t = request.toolkits().find(v);
    if (!t || !t->released) continue;
    if (candidates.empty() ||
        std::ranges::any_of(candidates, [&](const auto& c) { return c.truncated(2) == v.truncated(2); }))
      out.push_back(v);
  }
  return out;
}

// The request narrowed to the toolkits of `request` that something here
// provides; nullopt when it provides none of them.
std::optional<compat::ResolveRequest> narrowed_to_provided(const compat::ResolveRequest& request,
                                                           const ImageContext& images) {
  std::vector<util::Version> provided;
  for (const auto& entry : images.provided) provided.push_back(entry.first);
  compat::ResolveRequest narrowed = request;
  narrowed.candidates = intersect_toolkits(request, provided);
  if (narrowed.candidates.empty()) return std::nullopt;
  return narrowed;
}

const std::string* provider_for(const ImageContext& images, const util::Version& toolkit) {
  for (const auto& [version, provider] : images.provided)
    if (version.truncated(2) == toolkit.truncated(2)) return &provider;
  return nullptr;
}

// The resolution over every allowed toolkit, unless one that something here
// provides serves the tier too: then that one, with a note naming the newer
// toolkit nothing provides. `toolkits` set (the host engine's installed
// ones) means the candidates are already what exists.
compat::Outcome resolve_preferring_provided(const compat::ResolveRequest& request, const ImageContext& images,
                                            bool candidates_exist, std::vector<std::string>& notes) {
  auto full = compat::resolve(request);
  const auto* best = std::get_if<compat::Resolution>(&full);
  if (candidates_exist || !best || provider_for(images, best->toolkit->version)) return full;
  const auto narrowed = narrowed_to_provided(request, images);
  if (!narrowed) return full;
  auto provided = compat::resolve(*narrowed);
  auto* chosen = std::get_if<compat::Resolution>(&provided);
  if (!chosen || !(chosen->toolkit->version < best->toolkit->version)) return full;
  // A toolkit the tier's driver fully supports is not traded for a provided
  // one that would run only under minor-version compatibility.
  const auto meets = [&](const compat::Toolkit& t) {
    return !request.driver || t.driver_meets_minimum(*request.driver);
  };
  if (meets(*best->toolkit) && !meets(*chosen->toolkit)) return full;
  const std::string newer = best->toolkit->version.str();
  std::string note = "CUDA " + newer + " would also serve this tier; no image provides it";
  if (images.preference == compat::ImagePreference::offline_first)
    if (const auto official = compat::official_choice(*best->toolkit, best->cudnn))
      note += " here (with registry access: " + official->reference + ", ORCHESTRATE_IMAGE_PREFERENCE=official)";
  notes.push_back(std::move(note));
  chosen->reasons.insert(chosen->reasons.begin() + 1, "CUDA " + chosen->toolkit->version.str() + " is provided by " +
                                                          *provider_for(images, chosen->toolkit->version) + "; CUDA " +
                                                          newer + ", newer, is provided by nothing here");
  return provided;
}

// The CUDA versions of the official builds of the PyTorch releases a
// recipe's `pytorch:` range allows (flags::torch_cuda_builds), and the fact
// in words; nullopt for other frameworks, no range, or no known release in it.
struct TorchToolkits {
  std::vector<util::Version> cuda;  // ascending, major.minor
  std::string fact;
};

std::optional<TorchToolkits> torch_toolkits(const recipe::Recipe& r) {
  if (r.framework != flags::Framework::pytorch || !r.requires_.framework) return std::nullopt;
  const util::VersionRange& range = r.requires_.framework->range;
  TorchToolkits out;
  std::string_view source;
  for (const auto& release : flags::torch_cuda_builds()) {
    if (!allows_release(range, release.version)) continue;
    source = release.source;
    for (const auto& cuda : release.cuda)
      if (std::ranges::find(out.cuda, cuda) == out.cuda.end()) out.cuda.push_back(cuda);
  }
  if (out.cuda.empty()) return std::nullopt;
  std::ranges::sort(out.cuda);
  std::vector<std::string> names;
  for (const auto& v : out.cuda) names.push_back(v.str());
  out.fact = "pytorch " + range.text() + ": its official builds use CUDA " + util::join(names, ", ") + " (" +
             std::string(source) + ")";
  return out;
}

// The oldest PyTorch release whose official builds include a toolkit that
// compiles SASS for every GPU of the tier, in words; empty when none does.
std::string oldest_torch_for(const recipe::Tier& tier, const compat::ToolkitTable& table) {
  for (const auto& release : flags::torch_cuda_builds())
    for (const auto& cuda : release.cuda) {
      const compat::Toolkit* t = table.find(cuda);
      if (t && std::ranges::all_of(tier.gpus, [&](const auto& g) { return t->accepts(g.cc.base()); }))
        return "the oldest PyTorch whose official builds compile for every GPU of tier " + tier.name + " is " +
               release.version.str() + " (CUDA " + cuda.str() + ")";
    }
  return "";
}

// A TensorFlow recipe's `tensorflow:` range: each release in it, newest
// first, with its tested CUDA and cuDNN (flags::tf_releases), until one
// resolves; for hermetic releases (2.18+) only CUDA that the hermetic rules
// can fetch. The recipe's own cudnn range replaces the tested one. nullopt
// when the recipe is not TensorFlow, names no range, or no row is in it.
struct TfOutcome {
  compat::Outcome outcome;
  std::vector<std::string> facts;        // reasons: the release that decided, or each one tried
  std::optional<util::Version> release;  // the release that resolved
};

// "tensorflow 2.18 to 2.21 are tested with CUDA 12.5 and cuDNN 9.3 (source)"
// for a run of releases (newest first) that share one configuration.
std::string tf_fact(const flags::TfRelease& newest, const flags::TfRelease& oldest) {
  const bool one = &newest == &oldest;
  return "tensorflow " + oldest.version.str() + (one ? " is" : " to " + newest.version.str() + " are") +
         " tested with CUDA " + newest.cuda.str() + " and cuDNN " + newest.cudnn.str() + " (" +
         std::string(newest.source) + ")";
}

// The tried releases (newest first) as facts, one per run of equal configurations.
std::vector<std::string> tf_facts(const std::vector<const flags::TfRelease*>& tried) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tried.size();) {
    std::size_t j = i;
    while (j + 1 < tried.size() && tried[j + 1]->cuda == tried[i]->cuda && tried[j + 1]->cudnn == tried[i]->cudnn) ++j;
    out.push_back(tf_fact(*tried[i], *tried[j]));
    i = j + 1;
  }
  return out;
}

std::optional<TfOutcome> resolve_tensorflow(const recipe::Recipe& r, const compat::ResolveRequest& request,
                                            const ImageContext& images, bool candidates_exist,
                                            std::vector<std::string>& notes) {
  if (r.framework != flags::Framework::tensorflow || !r.requires_.framework) return std::nullopt;
  const util::VersionRange& range = r.requires_.framework->range;
  std::optional<TfOutcome> out;
  std::vector<const flags::TfRelease*> tried;
  std::vector<std::string> unusable;  // "CUDA 12.5": tested, but not a toolkit this plan may use
  const auto releases = flags::tf_releases();
  for (auto it = releases.rbegin(); it != releases.rend(); ++it) {
    if (!allows_release(range, it->version)) continue;
    compat::ResolveRequest attempt = request;
    attempt.candidates = intersect_toolkits(request, {it->cuda});
    if (it->version >= flags::k_tf_hermetic_since && !flags::hermetic_cuda_version(it->cuda))
      attempt.candidates.clear();
    // The tested cuDNN, unless the recipe's own range excludes it (then the recipe's).
    if (!attempt.cudnn || attempt.cudnn->range.contains(it->cudnn))
      attempt.cudnn = compat::RangeConstraint{*util::VersionRange::parse(it->cudnn.str()),
                                              "tensorflow " + it->version.str() + "'s tested cudnn"};
    if (!out) out = TfOutcome{.outcome = compat::Unsatisfiable{}, .facts = {}, .release = std::nullopt};
    tried.push_back(&*it);
    if (attempt.candidates.empty()) {
      const std::string cuda = "CUDA " + it->cuda.str();
      if (std::ranges::find(unusable, cuda) == unusable.end()) unusable.push_back(cuda);
      continue;
    }
    auto outcome = resolve_preferring_provided(attempt, images, candidates_exist, notes);
    if (std::holds_alternative<compat::Resolution>(outcome)) {
      out->outcome = std::move(outcome);
      out->facts = {tf_fact(*it, *it)};
      out->release = it->version;
      return out;
    }
    if (std::get<compat::Unsatisfiable>(out->outcome).reasons.empty()) out->outcome = std::move(outcome);
  }
  if (!out) return out;
  out->facts = tf_facts(tried);
  if (!unusable.empty())
    out->facts.push_back(util::join(unusable, ", ") + (unusable.size() == 1 ? " is" : " are") +
                         " not among the toolkits this plan may use (the configuration's toolkits, or those the "
                         "host engine has)");
  return out;
}

// A Caffe recipe's `caffe:` range: the cuDNN its release compiles with
// (flags::caffe_releases), joined to the recipe's own cudnn range. Returns
// the fact in words, or nullopt when the recipe is no Caffe with a known
// release in its range; sets `impossible` when the two ranges exclude each other.
std::optional<std::string> constrain_caffe(const recipe::Recipe& r, compat::ResolveRequest& request, bool& impossible) {
  if (!r.requires_.framework || !request.needs_cudnn) return std::nullopt;
  if (r.framework != flags::Framework::caffe && r.framework != flags::Framework::caffe_cmake) return std::nullopt;
  const util::VersionRange& range = r.requires_.framework->range;
  std::vector<std::string> matching;
  for (const auto& release : flags::caffe_releases())
    if (allows_release(range, release.version))
      matching.push_back(release.version.str() + " (" + std::string(release.fork) + ")");
  // Two forks with different bounds: neither is applied, and the plan says so.
  if (matching.size() > 1)
    return "caffe " + range.text() + " spans " + util::join(matching, " and ") +
           ", whose cuDNN bounds differ: neither is applied (name one release)";
  for (const auto& release : flags::caffe_releases()) {
    if (!allows_release(range, release.version)) continue;
    const std::string fact = "caffe " + release.version.str() + " (" + std::string(release.fork) +
                             ") compiles with cuDNN " + std::string(release.cudnn) + " (" +
                             std::string(release.source) + ")";
    std::string text(release.cudnn);
    if (request.cudnn) text = request.cudnn->range.text() + "," + text;
    auto joined = util::VersionRange::parse(text);
    impossible = !joined || !joined->satisfiable();
    if (impossible) return fact + ", and the recipe requires cudnn " + request.cudnn->range.text();
    request.cudnn =
        compat::RangeConstraint{std::move(*joined), "caffe " + release.version.str() + " and the recipe: cudnn"};
    return fact;
  }
  return std::nullopt;
}

PlanEntry plan_one(const recipe::Config& config, const recipe::Recipe& r, const recipe::Tier& tier,
                   const ImageContext& shared_images, const PlanScope& scope) {
  std::optional<ImageContext> own_images;
  const ImageContext& images =
      r.needs.empty() ? shared_images : own_images.emplace(image_context_for(shared_images, r));
  const auto& toolkits = scope.toolkits;
  PlanEntry e{.recipe = &r, .tier = &tier};
  auto request = request_for(config, r, tier, toolkits, scope.table);
  request.shortfalls = host_shortfalls(r, scope.host_toolkits);
  const auto torch_cuda = torch_toolkits(r);
  if (torch_cuda) {
    request.candidates = intersect_toolkits(request, torch_cuda->cuda);
    if (request.candidates.empty()) {
      e.reasons = {torch_cuda->fact + ", and none of them is a toolkit this plan may use"};
      return e;
    }
  }
  std::vector<std::string> framework_facts;
  if (torch_cuda) framework_facts.push_back(torch_cuda->fact);
  bool impossible = false;
  if (auto caffe = constrain_caffe(r, request, impossible)) {
    if (impossible) {
      e.reasons = {std::move(*caffe)};
      return e;
    }
    framework_facts.push_back(std::move(*caffe));
  }
  auto tf = resolve_tensorflow(r, request, images, toolkits.has_value(), e.notes);
  if (tf) framework_facts = tf->facts;
  auto outcome =
      tf ? std::move(tf->outcome) : resolve_preferring_provided(request, images, toolkits.has_value(), e.notes);
  if (auto* u = std::get_if<compat::Unsatisfiable>(&outcome)) {
    u->reasons.insert(u->reasons.begin(), framework_facts.begin(), framework_facts.end());
    // The oldest release that would serve, when the range's builds are what
    // cannot compile for the tier's GPUs (not a driver or compiler limit).
    const auto compiles_for_tier = [&](const util::Version& cuda) {
      const compat::Toolkit* t = request.toolkits().find(cuda);
      return t && std::ranges::all_of(tier.gpus, [&](const auto& g) { return t->accepts(g.cc.base()); });
    };
    if (torch_cuda && std::ranges::none_of(torch_cuda->cuda, compiles_for_tier))
      if (auto oldest = oldest_torch_for(tier, request.toolkits()); !oldest.empty())
        u->reasons.push_back(std::move(oldest));
    e.reasons = std::move(u->reasons);
    if (!u->split_hint.empty()) e.reasons.push_back(u->split_hint);
    for (std::size_t i = 0; i < u->split.size(); ++i)
      e.split.push_back({.gpus = std::move(u->split[i]), .toolkit = u->split_toolkits.at(i)});
    return e;
  }
  auto& res = std::get<compat::Resolution>(outcome);
  TorchCheck torch = check_torch_archs(r, res.archs, *res.toolkit);
  if (!torch.unsatisfiable.empty()) {
    e.reasons = std::move(torch.unsatisfiable);
    return e;
  }
  e.ok = true;
  e.toolkit = res.toolkit;
  e.cudnn = res.cudnn;
  e.archs = res.archs;
  e.reasons = std::move(res.reasons);
  e.reasons.insert(e.reasons.end(), framework_facts.begin(), framework_facts.end());
  e.reasons.insert(e.reasons.end(), torch.explain.begin(), torch.explain.end());
  e.warnings = std::move(res.warnings);
  e.warnings.insert(e.warnings.end(), torch.warnings.begin(), torch.warnings.end());
  choose_plan_image(e, images);
  e.framework = emit_framework(r, *e.toolkit, e.cudnn, e.archs, tf ? tf->release : torch.release);
  e.warnings.insert(e.warnings.end(), e.framework.warnings.begin(), e.framework.warnings.end());
  return e;
}

// Where a recipe's local source chooses its own archs, when its builds would
// stop there (`nvcc: verify`): said at plan time, before anything is built.
// Caffe's Makefile.config and bazel's configuration are written by the build
// drivers from the plan, so those frameworks are not scanned.
std::optional<std::string> own_arch_warning(const recipe::Recipe& r) {
  if (r.nvcc != recipe::NvccPolicy::verify || r.source.kind != recipe::Source::Kind::path) return std::nullopt;
  if (r.framework == recipe::Framework::caffe || r.framework == recipe::Framework::tensorflow) return std::nullopt;
  std::error_code ec;
  if (!std::filesystem::is_directory(r.source.path, ec)) return std::nullopt;
  const auto found = front::find_arch_settings(r.source.path, 1);
  if (found.empty()) return std::nullopt;
  return "recipe '" + r.name + "': its source chooses its own CUDA archs at " + found.front().str() +
         "; its build stops at the first nvcc call whose archs are not the plan's, unless the recipe says "
         "`nvcc: enforce`";
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

ExitCode PlanReport::exit_code() const { return all_ok() ? ExitCode::ok : ExitCode::check_failed; }

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
  const ImageContext images = image_context(scope.table ? *scope.table : compat::ToolkitTable::known());
  // Tier order as declared, recipes in declaration order within each tier.
  const auto by_tier = recipes_by_tier(config, scope.recipes);
  // Each recipe's source is scanned once, however many tiers it has.
  std::unordered_map<const recipe::Recipe*, std::optional<std::string>> own_archs;
  for (const auto& tier : config.tiers) {
    if (!scope.tiers.empty() && std::ranges::find(scope.tiers, tier.name) == scope.tiers.end()) continue;
    const auto recipes = by_tier.find(tier.name);
    if (recipes == by_tier.end()) continue;
    for (const recipe::Recipe* r : recipes->second) {
      PlanEntry e = plan_one(config, *r, tier, images, scope);
      if (e.ok) {
        auto [it, fresh] = own_archs.try_emplace(r);
        if (fresh) it->second = own_arch_warning(*r);
        if (it->second) e.warnings.push_back(*it->second);
      }
      report.plans.push_back(std::move(e));
    }
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

const compat::ImageChoice* shown_image(const PlanEntry& e) {
  return e.image && !e.image_needs_registry ? &*e.image : nullptr;
}

}  // namespace orc::app
