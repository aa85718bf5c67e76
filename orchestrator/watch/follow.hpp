#pragma once
// What the watcher follows when the configuration names no feed (issue 29):
// what this site's build images are made from. The offline images
// `images build` recorded here are made from Debian suites, so the Debian
// feed watches each one's suite; under the official preference
// (ORCHESTRATE_IMAGE_PREFERENCE=official) plans build in nvidia/cuda's
// official devel tags, so a registry feed watches those tags, one per
// Ubuntu release and flavour (plain, cudnn) the configuration's toolkits
// and recipes use. Pure: the caller reads the records and the preference.
#include <string>
#include <vector>

#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/util/version.hpp"
#include "orchestrator/watch/debian.hpp"
#include "orchestrator/watch/feeds.hpp"

namespace orc::watch {

// The Docker Hub repository the official tags are pulled from, as the
// registry API serves it (docker.io is its name in references).
inline constexpr std::string_view k_official_cuda_url = "https://registry-1.docker.io/nvidia/cuda";

struct SiteImages {
  std::vector<std::string> recorded;  // references `images build` recorded here, in the record's order
  compat::ImagePreference preference = compat::ImagePreference::offline_first;
  std::vector<util::Version> toolkits;  // the configuration's `toolkits:` (major.minor); empty: any
  bool plain = true;                    // a recipe builds without cuDNN (the plain devel tags)
  bool cudnn = false;                   // a recipe builds with cuDNN (the -cudnn devel tags)
};

struct FollowedRegistry {
  std::string url;  // k_official_cuda_url
  TagFilter filter;
};

struct Followed {
  std::vector<WatchedImage> debian;  // each recorded offline image, once
  std::vector<FollowedRegistry> registries;
  // One line per thing followed, what and why: "Debian trixie (main,
  // contrib, non-free), which orchestrate/cuda:12.4-trixie was made from
  // (recorded by `orchestrate images build`)".
  std::vector<std::string> about;
  bool empty() const { return debian.empty() && registries.empty(); }
};

Followed follow_site_images(const SiteImages& site);

// An offline image of the catalog as the Debian feed watches it.
WatchedImage watched_image(const compat::OfflineImage& image);

}  // namespace orc::watch
