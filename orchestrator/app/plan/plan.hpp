#pragma once
// `orchestrate plan`: every recipe x tier of a configuration resolved to a
// toolkit, cuDNN, arch set, image and the framework's variables, or
// explained as unsatisfiable. The PlanEntry is the contract between planning
// and doing: build reads its typed rows and sets, never strings back; only
// the renderers (cli/render_plan.cpp) make text.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/arch/arch_set.hpp"
#include "orchestrator/compat/cudnn.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/compat/toolkits.hpp"
#include "orchestrator/flags/emit.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/site/host_toolkits.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

struct PlanRequest {
  std::filesystem::path config;      // orchestrate.yaml
  std::vector<std::string> tiers;    // empty = every tier
  std::vector<std::string> recipes;  // empty = every recipe
};

// One group of a tier that resolves on its own, and with what.
struct SplitPart {
  std::vector<std::string> gpus;
  const compat::Toolkit* toolkit = nullptr;
};

// How the host engine changes a plan: it builds only with the toolkits
// installed here.
struct HostChoice {
  site::HostToolkit toolkit;  // the installed toolkit the build uses
  // The toolkit the plan chose with every configured toolkit, when the
  // host's differ from it (the build then uses an older or other one).
  const compat::Toolkit* instead_of = nullptr;
};

struct PlanEntry {
  const recipe::Recipe* recipe = nullptr;  // into PlanReport::config
  const recipe::Tier* tier = nullptr;
  bool ok = false;
  const compat::Toolkit* toolkit = nullptr;     // a row of compat's table; null when unsatisfiable
  const compat::CudnnRelease* cudnn = nullptr;  // null when the framework needs none
  arch::ArchSet archs;
  // The image a container engine builds in (nullopt: none serves the
  // toolkit). An official tag on an offline-first site is kept here (build
  // says to pull it) but not shown as the plan's image.
  std::optional<compat::ImageChoice> image;
  bool image_needs_registry = false;
  // The plan's offline (or host-mount) image when this machine has not built
  // it (no record of `images build` here); null when built or not offline.
  const compat::OfflineImage* image_to_build = nullptr;
  std::optional<HostChoice> host;  // set when planned for the host engine
  flags::Emitted framework;        // the framework's variables (typed) and their environment
  std::vector<std::string> reasons;
  std::vector<std::string> warnings;
  // What else would serve, shown with the plan: "CUDA 13.4 would also serve
  // this tier; no image provides it".
  std::vector<std::string> notes;
  std::vector<SplitPart> split;  // for unsatisfiable plans: tier split that resolves
  bool host_unservable = false;  // satisfiable in general; not with the host engine's toolkits
};

// A warning of several plans, said once with the plans it concerns.
struct GroupedWarning {
  std::string text;
  std::vector<std::string> plans;  // "recipe/tier"
};

struct PlanReport {
  std::shared_ptr<const recipe::Config> config;  // what the entries point into
  std::vector<PlanEntry> plans;
  std::vector<util::Diagnostic> config_warnings;
  bool all_ok() const;
  // An unsatisfiable recipe x tier is a failed check (1): the cluster cannot
  // be served as declared.
  util::ExitCode exit_code() const;
  // Every plan warning once, with the recipe/tier pairs that share it, in
  // the order they first appear.
  std::vector<GroupedWarning> grouped_warnings() const;
};

// The configuration, read and validated once per command. Throws
// util::Failure (bad_input) with every diagnostic.
std::shared_ptr<const recipe::Config> load_plan_config(const std::filesystem::path& file);

// What plan() resolves over, besides the configuration.
struct PlanScope {
  std::vector<std::string> tiers;    // empty = every tier
  std::vector<std::string> recipes;  // empty = every recipe
  // The toolkits the resolver may choose from in place of the
  // configuration's (the host engine passes the installed ones it allows).
  std::optional<std::vector<util::Version>> toolkits;
  // The installed toolkits behind `toolkits`, for the host engine: a version
  // none of whose trees has what a recipe needs (cudart, libcu++, its
  // `needs:`) is never chosen for that recipe, and the plan says what each lacks.
  std::vector<site::HostToolkit> host_toolkits;
  // The toolkit rows the resolver reads: the sourced table when null, or a
  // copy that learned from probes (the watcher's). Outlives the report.
  const compat::ToolkitTable* table = nullptr;
};

// Throws util::Failure (bad_input) for an unknown tier/recipe name or a bad
// ORCHESTRATE_IMAGE_PREFERENCE.
PlanReport plan(std::shared_ptr<const recipe::Config> config, const PlanScope& scope);
PlanReport plan(const PlanRequest& request);

// The plan the host engine can build: made again with the toolkits on this
// host that the configuration allows. An entry they cannot serve fails with
// the reasons and with what `full` would have used; one they serve with
// another toolkit than `full` chose says so (HostChoice::instead_of and a
// warning).
PlanReport plan_on_host(const PlanReport& full, const PlanScope& scope,
                        const std::vector<site::HostToolkit>& host_toolkits);

// What a recipe's build needs of a toolkit: the parts every build needs and
// its `needs:`.
std::vector<compat::ToolkitPart> parts_needed(const recipe::Recipe& r);

// The installed toolkit versions of `host` that cannot build `r`: for each,
// every tree of that major.minor and the parts it lacks, with the recipe
// line that needs them ("installed at /opt/cuda-12.4 without cuFFT
// (libcufft.so, cufft.h), which recipes/x.yaml:9:10 needs").
std::vector<compat::ToolkitShortfall> host_shortfalls(const recipe::Recipe& r,
                                                      const std::vector<site::HostToolkit>& host);

// "recipe/tier".
std::string plan_name(const PlanEntry& entry);

// The image the plan shows: none when only an official tag serves an
// offline-first site (its warning names the tag).
const compat::ImageChoice* shown_image(const PlanEntry& entry);

}  // namespace orc::app
