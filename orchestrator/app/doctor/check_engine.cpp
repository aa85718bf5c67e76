// The engine check, and per tier the toolkit and image checks, from the
// planner's own result (app::plan, and plan_on_host where builds run on the
// host): doctor says what a build of the tier would find, never its own
// reading of the tables.
#include <algorithm>
#include <map>

#include "orchestrator/app/doctor/site_checks_detail.hpp"
#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/engine/docker.hpp"
#include "orchestrator/site/host_toolkits.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app::doctor_detail {

namespace {

// A transport to the engine's socket that gives up after `bound` without a
// connection or without a byte: a socket whose listener never answers.
std::expected<engine::DockerEngine, engine::Error> connect_bounded(const std::filesystem::path& socket,
                                                                   std::chrono::milliseconds bound) {
  auto transport = net::make_curl_transport(
      {.unix_socket = socket, .peer = "engine", .connect_timeout = bound, .stall_timeout = bound});
  auto client = engine::DockerClient::connect(std::move(transport));
  if (!client) return std::unexpected(client.error());
  return engine::DockerEngine(std::move(*client));
}

// The tiers of the configuration with their plans, in the configuration's order.
std::vector<std::pair<const recipe::Tier*, std::vector<const PlanEntry*>>> by_tier(const recipe::Config& config,
                                                                                   const PlanReport& plans) {
  std::vector<std::pair<const recipe::Tier*, std::vector<const PlanEntry*>>> tiers;
  for (const auto& tier : config.tiers) {
    std::vector<const PlanEntry*> entries;
    for (const auto& e : plans.plans)
      if (e.tier->name == tier.name) entries.push_back(&e);
    tiers.emplace_back(&tier, std::move(entries));
  }
  return tiers;
}

// "saxpy: 13.0.88 (/usr/local/cuda)" on the host, "saxpy: CUDA 12.4".
std::string toolkit_words(const PlanEntry& e) {
  if (e.host) return e.recipe->name + ": " + e.host->toolkit.version.str() + " (" + e.host->toolkit.root.string() + ")";
  return e.recipe->name + ": CUDA " + e.toolkit->version.str();
}

void check_toolkits(SiteContext& site,
                    const std::vector<std::pair<const recipe::Tier*, std::vector<const PlanEntry*>>>& tiers,
                    bool on_host) {
  for (const auto& [tier, entries] : tiers) {
    if (entries.empty()) {
      site.add(CheckId::toolkit, tier->name, CheckStatus::skipped, "no recipe is built for this tier");
      continue;
    }
    std::vector<std::string> ok;
    // Recipes that fail for the same reasons are said once, together.
    std::vector<std::pair<std::string, std::vector<std::string>>> reasons;
    for (const PlanEntry* e : entries) {
      if (e->ok) {
        ok.push_back(toolkit_words(*e));
        continue;
      }
      const std::string why = e->reasons.empty() ? "unsatisfiable" : util::join(e->reasons, "; ");
      auto it = std::ranges::find(reasons, why, &std::pair<std::string, std::vector<std::string>>::first);
      if (it == reasons.end()) it = reasons.insert(reasons.end(), {why, {}});
      it->second.push_back(e->recipe->name);
    }
    std::vector<std::string> failed;
    for (const auto& [why, recipes] : reasons) failed.push_back(util::join(recipes, ", ") + ": " + why);
    const std::string where = on_host ? " (the host engine's toolkits)" : "";
    if (failed.empty()) {
      site.add(CheckId::toolkit, tier->name, CheckStatus::ok, util::join(ok, ", ") + where);
      continue;
    }
    std::string fix = "orchestrate plan " + tier->name;
    if (on_host) fix += "; scripts/install-cuda-toolkits.sh, or ORCHESTRATE_HOST_TOOLKITS=DIR naming the toolkit";
    site.add(CheckId::toolkit, tier->name, CheckStatus::fail, util::join(failed, "; ") + where, fix);
  }
}

// Whether the engine has the image a plan builds in, as build's own check
// (build_run.cpp) would find it: present, and for an image made here the
// one `images build` recorded.
struct ImageFinding {
  CheckStatus status = CheckStatus::ok;
  std::string words;
  std::string fix;
};

ImageFinding find_image(engine::DockerEngine& engine, const compat::ImageChoice& image) {
  const compat::OfflineImage* offline = compat::find_offline_image(image.reference);
  const std::string build_fix = offline ? "orchestrate images build " + std::string(offline->name)
                                        : std::string(engine.name()) + " pull " + image.reference;
  std::optional<site::ImageRecord> record;
  if (offline) record = site::find_built_image(image.reference);
  auto info = engine.inspect_image(image.reference);
  if (!info) {
    if (info.error().kind != engine::ErrorKind::not_found)
      return {CheckStatus::fail, image.reference + ": the engine did not say: " + info.error().message, {}};
    if (!offline) return {CheckStatus::fail, image.reference + ": not in the engine", build_fix};
    return {CheckStatus::fail,
            image.reference + (record ? ": recorded as built into " + record->engine + " but not in this engine"
                                      : ": never built here (no record in " + site::image_state_path().string() + ")"),
            build_fix};
  }
  if (offline && (!record || record->id != info->id))
    return {CheckStatus::fail,
            image.reference + " in the engine is " + info->id +
                (record ? ", not the one `images build` recorded (" + record->id + ")"
                        : ", with no record of `images build` (" + site::image_state_path().string() + ")"),
            build_fix};
  return {CheckStatus::ok, image.reference + " " + info->id.substr(0, 19), {}};
}

void check_images(SiteContext& site,
                  const std::vector<std::pair<const recipe::Tier*, std::vector<const PlanEntry*>>>& tiers) {
  std::map<std::string, ImageFinding> seen;  // each image asked once
  for (const auto& [tier, entries] : tiers) {
    std::vector<const compat::ImageChoice*> images;
    for (const PlanEntry* e : entries)
      if (e->ok && e->image &&
          std::ranges::find(images, e->image->reference, &compat::ImageChoice::reference) == images.end())
        images.push_back(&*e->image);
    if (images.empty()) {
      site.add(CheckId::image, tier->name, CheckStatus::skipped,
               entries.empty() ? "no recipe is built for this tier" : "no plan of the tier resolves to an image");
      continue;
    }
    CheckStatus status = CheckStatus::ok;
    std::vector<std::string> words, fixes;
    for (const compat::ImageChoice* image : images) {
      auto it = seen.find(image->reference);
      if (it == seen.end()) it = seen.emplace(image->reference, find_image(*site.engine, *image)).first;
      const ImageFinding& f = it->second;
      if (f.status == CheckStatus::fail) status = CheckStatus::fail;
      words.push_back(f.words);
      if (!f.fix.empty() && std::ranges::find(fixes, f.fix) == fixes.end()) fixes.push_back(f.fix);
    }
    site.add(CheckId::image, tier->name, status, util::join(words, "; "), util::join(fixes, "; "));
  }
}

}  // namespace

void check_engine(SiteContext& site) {
  auto found = engine::discover_engine(std::nullopt);
  if (!found) {
    site.add(CheckId::engine, "", CheckStatus::fail, found.error().message);
    return;
  }
  site.discovery = *found;
  if (found->kind == engine::EngineKind::host) {
    site.add(CheckId::engine, "host", CheckStatus::warn, found->reason);
    return;
  }
  const std::string socket = found->socket.string();
  auto connected = connect_bounded(found->socket, site.request.timeout);
  if (!connected) {
    site.add(CheckId::engine, socket, CheckStatus::fail,
             found->reason + ", and it did not answer within " + bound_text(site.request.timeout) + ": " +
                 connected.error().message);
    return;
  }
  const engine::DockerClient& client = connected->client();
  site.add(CheckId::engine, socket, CheckStatus::ok,
           std::string(connected->name()) + " " + client.engine().version + ", API " + client.api().str() + " (" +
               found->reason + ")");
  site.engine.emplace(std::move(*connected));
}

void check_tiers(SiteContext& site) {
  const auto skip_both = [&](const std::string& why) {
    site.add(CheckId::toolkit, "", CheckStatus::skipped, why);
    site.add(CheckId::image, "", CheckStatus::skipped, why);
  };
  if (!site.config) return skip_both("no configuration read");
  if (site.config->tiers.empty()) return skip_both("the configuration declares no tier");
  PlanReport plans;
  const bool on_host = site.discovery && site.discovery->kind == engine::EngineKind::host;
  try {
    plans = plan(site.config, {});
    if (on_host)
      plans = plan_on_host(plans, {}, site::discover_host_toolkits(site::host_toolkit_search_from_environment()));
  } catch (const util::Failure& failure) {
    site.add(CheckId::toolkit, "", CheckStatus::fail, "planning failed: " + failure_words(failure), "orchestrate plan");
    site.add(CheckId::image, "", CheckStatus::skipped, "planning failed");
    return;
  }
  const auto tiers = by_tier(*site.config, plans);
  check_toolkits(site, tiers, on_host);
  if (on_host) {
    site.add(CheckId::image, "", CheckStatus::skipped, "builds run on the host engine: no build image is used");
    return;
  }
  if (!site.engine) {
    site.add(CheckId::image, "", CheckStatus::skipped, "no container engine answered: its images cannot be asked");
    return;
  }
  check_images(site, tiers);
}

}  // namespace orc::app::doctor_detail
