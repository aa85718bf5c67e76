// With no feed under `watch:` (issue 29): the feeds of what this site's
// build images are made from (watch/follow.hpp), from the records of
// `images build` and the image preference, or an error that says what to add.
#include <algorithm>

#include "orchestrator/app/watch/watch_detail.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/watch/follow.hpp"

namespace orc::app::detail {

namespace {

using util::ExitCode;

compat::ImagePreference image_preference() {
  const auto env = util::env_get("ORCHESTRATE_IMAGE_PREFERENCE");
  if (!env) return compat::ImagePreference::offline_first;
  const auto preference = compat::parse_image_preference(*env);
  if (!preference)
    throw util::Failure(ExitCode::bad_input,
                        "ORCHESTRATE_IMAGE_PREFERENCE is '" + *env + "'; expected 'offline' or 'official'");
  return *preference;
}

watch::SiteImages site_images(const recipe::Config& config) {
  watch::SiteImages site{.recorded = {},
                         .preference = image_preference(),
                         .toolkits = config.toolkits,
                         .plain = config.recipes.empty(),
                         .cudnn = false};
  for (const auto& record : site::read_image_state(site::image_state_path())) site.recorded.push_back(record.reference);
  for (const auto& r : config.recipes)
    (recipe::framework_uses_cudnn(r.framework) && !r.requires_.without_cudnn ? site.cudnn : site.plain) = true;
  return site;
}

// The offline images that serve the configuration's toolkits, and the
// host-mount one: what `images build` could make for it.
std::vector<std::string> buildable(const recipe::Config& config) {
  std::vector<std::string> out;
  for (const compat::OfflineImage& image : compat::offline_images()) {
    const bool serves = image.host_mount || config.toolkits.empty() ||
                        std::ranges::any_of(config.toolkits, [&](const util::Version& t) {
                          return t.truncated(2) == image.toolkit.truncated(2);
                        });
    if (serves) out.emplace_back(image.name);
  }
  return out;
}

std::string nothing_to_follow(const std::filesystem::path& file, const recipe::Config& config) {
  const auto official = watch::follow_site_images(watch::SiteImages{.recorded = {},
                                                                    .preference = compat::ImagePreference::official,
                                                                    .toolkits = config.toolkits,
                                                                    .plain = true,
                                                                    .cudnn = false});
  const std::string os = official.registries.empty() ? "ubuntu24.04" : official.registries.back().filter.os;
  return file.string() + (config.watch ? ": 'watch:' names no feed" : ": no 'watch:'") +
         ", and nothing here says what this site's build images are made from: no offline image is recorded "
         "(`orchestrate images build NAME` makes one, NAME one of " +
         util::join(buildable(config), ", ") +
         "; the watcher then follows the Debian suite it is made from), and plans do not use the official nvidia/cuda "
         "tags (with ORCHESTRATE_IMAGE_PREFERENCE=official the watcher follows them). Or name what to watch under "
         "'watch:' (recipes/schema.md, watch), e.g. `watch: {images: [{url: \"" +
         std::string(watch::k_official_cuda_url) + "\", os: " + os + "}]}`";
}

}  // namespace

WatchFollowed follow_site(const std::filesystem::path& file, const recipe::Config& config,
                          recipe::WatchSettings& settings) {
  const watch::Followed followed = watch::follow_site_images(site_images(config));
  if (followed.empty()) throw util::Failure(ExitCode::bad_input, nothing_to_follow(file, config));
  // Every image recorded here, from the mirror `images build` uses: what
  // `debian: {}` says.
  if (!followed.debian.empty()) settings.debian = recipe::WatchDebian{};
  for (const auto& r : followed.registries)
    settings.images.push_back(recipe::WatchImage{
        .url = r.url, .flavour = r.filter.flavour, .os = r.filter.os, .cudnn = r.filter.cudnn, .where = {}});
  return WatchFollowed{.heading = file.string() + (config.watch ? ": 'watch:' names no feed" : ": no 'watch:'") +
                                  "; following what this site's build images are made from:",
                       .about = followed.about};
}

}  // namespace orc::app::detail
