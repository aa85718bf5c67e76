// Issue 29, point 7: with no feed under `watch:` the watcher follows what
// this site's images are made from: the Debian suite of each offline image
// `images build` recorded, and under the official preference the official
// nvidia/cuda devel tags of the configuration's toolkits.
#include "orchestrator/watch/follow.hpp"

#include <gtest/gtest.h>

namespace orc::watch {
namespace {

util::Version v(const char* text) { return util::Version::parse(text).value(); }

TEST(WatchFollow, NothingRecordedOfflineFollowsNothing) {
  const Followed f = follow_site_images(SiteImages{.recorded = {},
                                                   .preference = compat::ImagePreference::offline_first,
                                                   .toolkits = {v("12.4")},
                                                   .plain = true,
                                                   .cudnn = true});
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(f.about.empty());
}

TEST(WatchFollow, EachRecordedOfflineImageIsWatchedThroughItsSuite) {
  // As images.v1.json records them, a reference twice (by name and by
  // reference), and one the catalog does not know (left out).
  const Followed f = follow_site_images(
      SiteImages{.recorded = {"orchestrate/cuda:12.4-trixie", "orchestrate/cuda:host-bookworm",
                              "orchestrate/cuda:11.8-bookworm", "12.4-trixie", "orchestrate/cuda:10.2-buster"},
                 .preference = compat::ImagePreference::offline_first,
                 .toolkits = {},
                 .plain = true,
                 .cudnn = false});
  ASSERT_EQ(f.debian.size(), 3u);
  EXPECT_EQ(f.debian[0].name, "12.4-trixie");
  EXPECT_EQ(f.debian[0].suite, "trixie");
  EXPECT_EQ(f.debian[0].components, (std::vector<std::string>{"main", "contrib", "non-free"}));
  EXPECT_EQ(f.debian[0].packages, watched_image(*compat::find_offline_image("12.4-trixie")).packages);
  EXPECT_EQ(f.debian[1].name, "host-bookworm");
  EXPECT_TRUE(f.registries.empty());
  EXPECT_EQ(f.about, (std::vector<std::string>{
                         "Debian bookworm (main), which orchestrate/cuda:host-bookworm was made from (recorded by "
                         "`orchestrate images build`)",
                         "Debian bookworm (main, contrib, non-free), which orchestrate/cuda:11.8-bookworm was made "
                         "from (recorded by `orchestrate images build`)",
                         "Debian trixie (main, contrib, non-free), which orchestrate/cuda:12.4-trixie was made from "
                         "(recorded by `orchestrate images build`)"}));
}

TEST(WatchFollow, TheOfficialPreferenceFollowsTheOfficialTagsOfTheToolkits) {
  // The example configuration's toolkits; a recipe with cuDNN and one without.
  const Followed f = follow_site_images(SiteImages{.recorded = {},
                                                   .preference = compat::ImagePreference::official,
                                                   .toolkits = {v("11.8"), v("12.4"), v("12.8"), v("13.0")},
                                                   .plain = true,
                                                   .cudnn = true});
  EXPECT_TRUE(f.debian.empty());
  ASSERT_EQ(f.registries.size(), 2u);  // every one of them is an ubuntu22.04 tag
  EXPECT_EQ(f.registries[0].url, "https://registry-1.docker.io/nvidia/cuda");
  EXPECT_EQ(f.registries[0].filter.flavour, "devel");
  EXPECT_EQ(f.registries[0].filter.os, "ubuntu22.04");
  EXPECT_FALSE(f.registries[0].filter.cudnn);
  EXPECT_TRUE(f.registries[1].filter.cudnn);
  ASSERT_EQ(f.about.size(), 2u);
  EXPECT_EQ(f.about[0],
            "the official nvidia/cuda devel tags on ubuntu22.04 at https://registry-1.docker.io/nvidia/cuda, which "
            "plans of CUDA 11.8.0, 12.4.1, 12.8.2, 13.0.3 build in (ORCHESTRATE_IMAGE_PREFERENCE=official)");
  // 12.8.2 has no cudnn flavour.
  EXPECT_EQ(f.about[1],
            "the official nvidia/cuda devel cudnn tags on ubuntu22.04 at https://registry-1.docker.io/nvidia/cuda, "
            "which plans of CUDA 11.8.0, 12.4.1, 13.0.3 build in (ORCHESTRATE_IMAGE_PREFERENCE=official)");
  // Only the flavour recipes use; every Ubuntu release when no toolkit is named.
  const Followed plain = follow_site_images(SiteImages{.recorded = {"orchestrate/cuda:12.4-trixie"},
                                                       .preference = compat::ImagePreference::official,
                                                       .toolkits = {},
                                                       .plain = true,
                                                       .cudnn = false});
  EXPECT_EQ(plain.debian.size(), 1u);
  ASSERT_EQ(plain.registries.size(), 2u);
  EXPECT_EQ(plain.registries[0].filter.os, "ubuntu20.04");
  EXPECT_EQ(plain.registries[1].filter.os, "ubuntu22.04");
  EXPECT_FALSE(plain.registries[1].filter.cudnn);
  ASSERT_EQ(plain.about.size(), 3u);  // the suite first
  EXPECT_TRUE(plain.about[0].starts_with("Debian trixie")) << plain.about[0];
}

}  // namespace
}  // namespace orc::watch
