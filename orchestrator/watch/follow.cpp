#include "orchestrator/watch/follow.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "orchestrator/util/strings.hpp"

namespace orc::watch {

WatchedImage watched_image(const compat::OfflineImage& image) {
  WatchedImage out{.name = std::string(image.name),
                   .reference = image.reference(),
                   .suite = std::string(image.suite),
                   .components = util::split_any(image.components, ","),
                   .packages = {}};
  for (const auto p : image.packages) out.packages.emplace_back(p);
  return out;
}

namespace {

// The official images of the configuration's toolkits (every one the
// catalog has when it names none) that have the flavour, by Ubuntu release.
std::map<std::string, std::vector<std::string>> official_by_os(const std::vector<util::Version>& toolkits, bool cudnn) {
  std::map<std::string, std::vector<std::string>> out;
  for (const compat::OfficialImage& image : compat::official_images()) {
    const bool wanted = toolkits.empty() || std::ranges::any_of(toolkits, [&](const util::Version& t) {
                          return t.truncated(2) == image.cuda.truncated(2);
                        });
    if (wanted && (!cudnn || image.has_cudnn)) out[std::string(image.os)].push_back(image.cuda.str());
  }
  return out;
}

}  // namespace

Followed follow_site_images(const SiteImages& site) {
  Followed out;
  // By suite, so a line names every image made from it.
  std::map<std::string, std::vector<std::string>> suites;
  for (const std::string& reference : site.recorded) {
    const compat::OfflineImage* image = compat::find_offline_image(reference);
    if (!image || std::ranges::any_of(out.debian, [&](const WatchedImage& w) { return w.name == image->name; }))
      continue;
    out.debian.push_back(watched_image(*image));
    suites[std::string(image->suite) + " (" + util::join(util::split_any(image->components, ","), ", ") + ")"]
        .push_back(image->reference());
  }
  for (const auto& [suite, images] : suites)
    out.about.push_back("Debian " + suite + ", which " + util::join(images, ", ") +
                        (images.size() == 1 ? " was" : " were") +
                        " made from (recorded by `orchestrate images build`)");
  if (site.preference != compat::ImagePreference::official) return out;
  for (const bool cudnn : {false, true}) {
    if (!(cudnn ? site.cudnn : site.plain)) continue;
    for (const auto& [os, releases] : official_by_os(site.toolkits, cudnn)) {
      out.registries.push_back(FollowedRegistry{.url = std::string(k_official_cuda_url),
                                                .filter = TagFilter{.flavour = "devel", .os = os, .cudnn = cudnn}});
      out.about.push_back("the official nvidia/cuda devel" + std::string(cudnn ? " cudnn" : "") + " tags on " + os +
                          " at " + std::string(k_official_cuda_url) + ", which plans of CUDA " +
                          util::join(releases, ", ") + " build in (ORCHESTRATE_IMAGE_PREFERENCE=official)");
    }
  }
  return out;
}

}  // namespace orc::watch
