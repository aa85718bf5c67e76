// The watcher's decision per recipe x tier: which newer toolkit a policy
// takes, which it declines and why, and a base image rebuilt under its tag.
#include "orchestrator/watch/decide.hpp"

#include <gtest/gtest.h>

namespace orc::watch {
namespace {

util::Version v(std::string_view text) { return *util::Version::parse(text); }

Offer image(std::string_view toolkit, std::string tag, std::string digest = "sha256:1111111111111111aaaa") {
  return Offer{.feed = "registry r/nvidia/cuda",
               .toolkit = v(toolkit),
               .cudnn = std::nullopt,
               .image = "r/nvidia/cuda:" + tag,
               .digest = std::move(digest),
               .detail = "devel ubuntu22.04"};
}

Current built_with(std::string_view toolkit, std::vector<arch::ComputeCapability> gpus) {
  return Current{.recipe = "saxpy",
                 .tier = "t",
                 .toolkit = v(toolkit),
                 .image = "r/nvidia/cuda:12.4.0-devel-ubuntu22.04",
                 .image_digest = "sha256:0000000000000000ffff",
                 .gpus = std::move(gpus),
                 .cuda = std::nullopt};
}

const std::vector<Offer> k_offers = {
    image("12.4.0", "12.4.0-devel-ubuntu22.04", "sha256:0000000000000000ffff"),
    image("12.4.1", "12.4.1-devel-ubuntu22.04"),
    image("12.6.3", "12.6.3-devel-ubuntu22.04"),
    image("13.0.2", "13.0.2-devel-ubuntu22.04"),
};

TEST(WatchDecide, EachPolicyTakesTheNewestItAllows) {
  const Current c = built_with("12.4.0", {{8, 0}, {9, 0}});
  Decision d = decide(c, k_offers, Policy::patch);
  ASSERT_TRUE(d.stale);
  EXPECT_EQ(d.reason, "CUDA 12.4.0 -> 12.4.1 (r/nvidia/cuda:12.4.1-devel-ubuntu22.04)");
  EXPECT_EQ(d.declined,
            (std::vector<std::string>{"CUDA 12.6.3 (registry r/nvidia/cuda): policy patch stays on CUDA 12.4.x",
                                      "CUDA 13.0.2 (registry r/nvidia/cuda): policy patch stays on CUDA 12.4.x"}));
  d = decide(c, k_offers, Policy::minor);
  EXPECT_EQ(d.take->toolkit, v("12.6.3"));
  EXPECT_EQ(d.declined,
            std::vector<std::string>{"CUDA 13.0.2 (registry r/nvidia/cuda): policy minor stays on CUDA 12.x"});
  d = decide(c, k_offers, Policy::major);
  EXPECT_EQ(d.take->toolkit, v("13.0.2"));
  EXPECT_TRUE(d.declined.empty());
  d = decide(c, k_offers, Policy::pinned);
  EXPECT_FALSE(d.stale);
  EXPECT_EQ(d.declined.size(), 3u);
  EXPECT_EQ(d.declined.front(), "CUDA 12.4.1 (registry r/nvidia/cuda): policy pinned takes no new toolkit");
  // Nothing newer: nothing to do.
  EXPECT_FALSE(decide(built_with("13.0.2", {{9, 0}}), k_offers, Policy::major).stale);
}

// CUDA 13 dropped Volta: a V100 tier stays on 12.x, and the report names
// the last toolkit that serves it.
TEST(WatchDecide, ANewerToolkitThatDropsATiersGpuIsNotTaken) {
  const Current c = built_with("12.6.3", {{7, 0}, {8, 0}});
  const Decision d = decide(c, k_offers, Policy::major);
  EXPECT_FALSE(d.stale);
  ASSERT_EQ(d.declined.size(), 1u);
  EXPECT_EQ(d.declined.front(),
            "CUDA 13.0.2 (registry r/nvidia/cuda): drops sm_70, which tier t needs; the last toolkit that serves "
            "the tier is CUDA 12.9");
}

TEST(WatchDecide, RangesUnknownToolkitsAndRedistOnlyReleasesAreDeclined) {
  Current c = built_with("12.4.0", {{9, 0}});
  c.cuda = *util::VersionRange::parse("<12.6");
  std::vector<Offer> offers = k_offers;
  offers.push_back(image("13.6.0", "13.6.0-devel-ubuntu22.04"));
  offers.push_back(Offer{.feed = "redist d/", .toolkit = v("12.5.1"), .detail = "redistrib_12.5.1.json"});
  offers.push_back(Offer{.feed = "redist n/", .toolkit = util::Version(std::vector<int>{12}), .cudnn = v("9.28.1.4")});
  const Decision d = decide(c, offers, Policy::major);
  ASSERT_TRUE(d.stale);
  EXPECT_EQ(d.take->toolkit, v("12.4.1"));
  EXPECT_EQ(d.declined,
            (std::vector<std::string>{"CUDA 12.6.3 (registry r/nvidia/cuda): outside the recipe's cuda range <12.6",
                                      "CUDA 13.0.2 (registry r/nvidia/cuda): outside the recipe's cuda range <12.6",
                                      "CUDA 13.6.0 (registry r/nvidia/cuda): outside the recipe's cuda range <12.6",
                                      "CUDA 12.5.1 (redist d/): released, but no watched image offers it yet"}));
  c.cuda.reset();
  const Offer redist_only{.feed = "redist d/", .toolkit = v("13.6.0"), .detail = "redistrib_13.6.0.json"};
  EXPECT_EQ(decide(c, {redist_only}, Policy::major).declined,
            std::vector<std::string>{
                "CUDA 13.6.0 (redist d/): not in the toolkit tables, and no watched image offers it to probe"});
}

// A release the tables do not know is taken only as "probe first"; once
// its image is probed, the probe decides: the release its nvcc says, and
// the GPUs its --list-gpu-code holds.
TEST(WatchDecide, AnUnknownReleaseIsProbedAndThenJudgedByItsProbe) {
  const Current c = built_with("13.0.2", {{9, 0}, {12, 0}});
  const Offer next = image("13.6.0", "13.6.0-devel-ubuntu22.04", "sha256:6666");
  Decision d = decide(c, {next}, Policy::minor);
  ASSERT_TRUE(d.stale);
  EXPECT_TRUE(d.unprobed);
  EXPECT_EQ(d.reason,
            "CUDA 13.0.2 -> 13.6.0 (r/nvidia/cuda:13.6.0-devel-ubuntu22.04); not in the tables yet: its nvcc is "
            "probed first");

  Probe probe{.image = next.image, .digest = "sha256:6666", .nvcc = v("13.6.21"), .sass = {{9, 0}, {12, 0}}};
  d = decide(c, {next}, Policy::minor, {probe});
  ASSERT_TRUE(d.stale);
  EXPECT_FALSE(d.unprobed);
  EXPECT_EQ(d.reason, "CUDA 13.0.2 -> 13.6.0 (r/nvidia/cuda:13.6.0-devel-ubuntu22.04)");

  // Its nvcc does not list sm_120: not taken, and why.
  probe.sass = {{9, 0}, {10, 0}};
  d = decide(c, {next}, Policy::minor, {probe});
  EXPECT_FALSE(d.stale);
  ASSERT_EQ(d.declined.size(), 1u);
  EXPECT_TRUE(
      d.declined[0].starts_with("CUDA 13.6.0 (registry r/nvidia/cuda): drops sm_120, which tier t needs (its "
                                "nvcc --list-gpu-code, probed); the last toolkit that serves the tier is "))
      << d.declined[0];
  // The watcher asks by release, not by the line's words.
  ASSERT_NE(d.declined_for(v("13.6.0")), nullptr);
  EXPECT_EQ(*d.declined_for(v("13.6.0")), d.declined[0]);
  EXPECT_EQ(d.declined_for(v("13.6.1")), nullptr);

  // A tag whose nvcc is another release: refused.
  probe.nvcc = v("13.0.88");
  d = decide(c, {next}, Policy::minor, {probe});
  EXPECT_FALSE(d.stale);
  EXPECT_EQ(d.declined,
            std::vector<std::string>{
                "CUDA 13.6.0 (registry r/nvidia/cuda): its image's nvcc is 13.0.88 (probed), not CUDA 13.6"});
}

TEST(WatchDecide, ABaseImageRebuiltUnderItsTagIsAChangeEvenWhenPinned) {
  const Current c = built_with("12.4.0", {{9, 0}});
  const std::vector<Offer> moved = {image("12.4.0", "12.4.0-devel-ubuntu22.04", "sha256:2222222222222222bbbb")};
  const Decision d = decide(c, moved, Policy::pinned);
  ASSERT_TRUE(d.stale);
  EXPECT_EQ(d.reason, "base image moved: r/nvidia/cuda:12.4.0-devel-ubuntu22.04 000000000000 -> 222222222222");
  EXPECT_FALSE(
      decide(c, {image("12.4.0", "12.4.0-devel-ubuntu22.04", "sha256:0000000000000000ffff")}, Policy::pinned).stale);
}

TEST(WatchDecide, ASetWithoutAPatchLevelCannotJudgeAPatchRelease) {
  const Decision d = decide(built_with("12.4", {{9, 0}}), k_offers, Policy::patch);
  EXPECT_FALSE(d.stale);
  EXPECT_EQ(d.declined.front(),
            "CUDA 12.4.1 (registry r/nvidia/cuda): the set records CUDA 12.4 without its patch level, so a patch "
            "release cannot be told from it");
}

// A manifest records the table row (12.4); the set's nvidia/cuda tag gives
// the patch level, and a mirror's tag is the official one.
TEST(WatchDecide, TheBuildImageTellsThePatchLevelAndMirrorsMatch) {
  EXPECT_EQ(built_release(v("12.4"), "docker.io/nvidia/cuda:12.4.1-devel-ubuntu22.04"), v("12.4.1"));
  EXPECT_EQ(built_release(v("12.4"), "docker.io/nvidia/cuda:12.6.3-devel-ubuntu22.04"), v("12.4"));
  EXPECT_EQ(built_release(v("12.4"), "orchestrate/cuda:12.4-trixie"), v("12.4"));
  EXPECT_EQ(built_release(v("13.0"), "host"), v("13.0"));
  EXPECT_EQ(built_release(v("12.4"), "127.0.0.1:5000/nvidia/cuda"), v("12.4"));
  EXPECT_EQ(image_key("docker.io/nvidia/cuda:12.4.1-devel-ubuntu22.04"), "nvidia/cuda:12.4.1-devel-ubuntu22.04");
  EXPECT_EQ(image_key("127.0.0.1:5000/nvidia/cuda:12.4.1-devel-ubuntu22.04"), "nvidia/cuda:12.4.1-devel-ubuntu22.04");
  EXPECT_EQ(image_key("localhost/nvidia/cuda:x"), "nvidia/cuda:x");
  EXPECT_EQ(image_key("nvidia/cuda:x"), "nvidia/cuda:x");
  // So a set built from docker.io's 12.4.0 tag takes the mirror's 12.4.1 under patch.
  Current c = built_with("12.4", {{9, 0}});
  c.toolkit = built_release(c.toolkit, "docker.io/nvidia/cuda:12.4.0-devel-ubuntu22.04");
  EXPECT_EQ(decide(c, k_offers, Policy::patch).take->toolkit, v("12.4.1"));
}

// What the plan would refuse is not taken: a toolkit outside `toolkits:`, or
// one whose minimum driver the tier's driver does not meet.
TEST(WatchDecide, TheConfigurationsToolkitsAndTheTiersDriverBound) {
  Current c = built_with("12.4.0", {{9, 0}});
  c.allowed = {v("12.4"), v("12.6")};
  Decision d = decide(c, k_offers, Policy::major);
  EXPECT_EQ(d.take->toolkit, v("12.6.3"));
  EXPECT_EQ(d.declined, std::vector<std::string>{"CUDA 13.0.2 (registry r/nvidia/cuda): not among the "
                                                 "configuration's toolkits"});
  c.allowed.clear();
  c.driver = v("550.54.15");
  d = decide(c, k_offers, Policy::major);
  EXPECT_EQ(d.take->toolkit, v("12.4.1"));
  EXPECT_EQ(d.declined, (std::vector<std::string>{
                            "CUDA 12.6.3 (registry r/nvidia/cuda): tier t's driver 550.54.15 is older than its "
                            "minimum 560.28.03",
                            "CUDA 13.0.2 (registry r/nvidia/cuda): tier t's driver 550.54.15 is older than its "
                            "minimum 580.65.06"}));
}

// A redist release that an image also offers is not declined beside it.
TEST(WatchDecide, ARedistOfferAnImageCoversIsNotRepeated) {
  std::vector<Offer> offers = k_offers;
  offers.push_back(Offer{.feed = "redist d/", .toolkit = v("12.4.1"), .detail = "redistrib_12.4.1.json"});
  const Decision d = decide(built_with("12.4.0", {{9, 0}}), offers, Policy::patch);
  EXPECT_EQ(d.take->toolkit, v("12.4.1"));
  for (const auto& line : d.declined) EXPECT_EQ(line.find("redist"), std::string::npos) << line;
}

// The image-catalog feed: our offline image 12.4-trixie, recorded as made
// from trixie's packages of 2026-12-02.
const std::vector<std::string> k_trixie = {"nvidia-cuda-toolkit=12.4.131~12.4.1-2", "g++-13=13.3.0-16",
                                           "cmake=3.31.6-2"};

Offer trixie_offer(std::vector<std::string> packages, std::string_view toolkit = "12.4.1") {
  Offer o{.feed = "debian http://127.0.0.1/debian",
          .toolkit = toolkit.empty() ? util::Version{} : v(toolkit),
          .cudnn = std::nullopt,
          .image = "orchestrate/cuda:12.4-trixie",
          .digest = {},
          .detail = "trixie main,contrib,non-free",
          .debian = true};
  o.packages = std::move(packages);
  return o;
}

Current built_in_trixie() {
  Current c = built_with("12.4", {{8, 0}, {9, 0}});
  c.image = "orchestrate/cuda:12.4-trixie";
  c.image_digest = "sha256:aaaaaaaaaaaaaaaa1111";
  c.image_record = Current::ImageRecord{.id = "sha256:aaaaaaaaaaaaaaaa1111", .packages = k_trixie};
  return c;
}

TEST(WatchDecideDebian, TheArchiveAsRecordedIsNoChange) {
  const Decision d = decide(built_in_trixie(), {trixie_offer(k_trixie)}, Policy::patch);
  EXPECT_FALSE(d.stale);
  EXPECT_TRUE(d.declined.empty());
  // An offer for another offline image says nothing about this one.
  Offer other = trixie_offer({"g++-11=11.3.0-12"}, "");
  other.image = "orchestrate/cuda:11.8-bookworm";
  EXPECT_FALSE(decide(built_in_trixie(), {other}, Policy::patch).stale);
}

TEST(WatchDecideDebian, ANewPackageRevisionMakesTheImageAgainEvenWhenPinned) {
  const std::vector<std::string> now = {"nvidia-cuda-toolkit=12.4.131~12.4.1-3", "g++-13=13.3.0-16",
                                        "cmake=3.31.6-2+b1"};
  for (Policy policy : {Policy::patch, Policy::pinned}) {
    const Decision d = decide(built_in_trixie(), {trixie_offer(now)}, policy);
    ASSERT_TRUE(d.stale) << to_string(policy);
    EXPECT_TRUE(d.make_image);
    EXPECT_EQ(d.reason,
              "trixie main,contrib,non-free: nvidia-cuda-toolkit 12.4.131~12.4.1-2 -> 12.4.131~12.4.1-3, cmake "
              "3.31.6-2 -> 3.31.6-2+b1; orchestrate/cuda:12.4-trixie is made again");
    EXPECT_EQ(d.take->image, "orchestrate/cuda:12.4-trixie");
  }
}

TEST(WatchDecideDebian, ANewToolkitReleaseFollowsThePolicyAndANewMinorNeedsACatalogEntry) {
  const std::vector<std::string> patch = {"nvidia-cuda-toolkit=12.4.132~12.4.2-1", "g++-13=13.3.0-16",
                                          "cmake=3.31.6-2"};
  Decision d = decide(built_in_trixie(), {trixie_offer(patch, "12.4.2")}, Policy::patch);
  ASSERT_TRUE(d.stale);
  EXPECT_TRUE(d.make_image);
  d = decide(built_in_trixie(), {trixie_offer(patch, "12.4.2")}, Policy::pinned);
  EXPECT_FALSE(d.stale);
  ASSERT_EQ(d.declined.size(), 1u);
  EXPECT_EQ(d.declined[0],
            "image orchestrate/cuda:12.4-trixie (debian http://127.0.0.1/debian, trixie main,contrib,non-free): CUDA "
            "12.4.1 -> 12.4.2: policy pinned takes no new toolkit");
  const std::vector<std::string> minor = {"nvidia-cuda-toolkit=12.5.82~12.5.1-1", "g++-13=13.3.0-16",
                                          "cmake=3.31.6-2"};
  d = decide(built_in_trixie(), {trixie_offer(minor, "12.5.1")}, Policy::major);
  EXPECT_FALSE(d.stale);
  ASSERT_EQ(d.declined.size(), 1u);
  EXPECT_NE(d.declined[0].find("the suite now packages CUDA 12.5.1, and the image is made for CUDA 12.4: the image "
                               "catalog needs an image for 12.5"),
            std::string::npos)
      << d.declined[0];
}

TEST(WatchDecideDebian, AMissingPackageOrNoRecordIsDeclined) {
  Offer gone = trixie_offer({"cmake=3.31.6-2"});
  gone.missing = {"nvidia-cuda-toolkit", "g++-13"};
  Decision d = decide(built_in_trixie(), {gone}, Policy::patch);
  EXPECT_FALSE(d.stale);
  ASSERT_EQ(d.declined.size(), 1u);
  EXPECT_NE(d.declined[0].find("the suite no longer has nvidia-cuda-toolkit, g++-13: the image cannot be made again"),
            std::string::npos);
  Current unrecorded = built_in_trixie();
  unrecorded.image_record.reset();
  d = decide(unrecorded, {trixie_offer({"cmake=9"})}, Policy::patch);
  EXPECT_FALSE(d.stale);
  ASSERT_EQ(d.declined.size(), 1u);
  EXPECT_NE(d.declined[0].find("nothing records what the image was made from here"), std::string::npos);
}

TEST(WatchDecideDebian, ASetBuiltBeforeTheImageWasMadeAgainIsStale) {
  Current c = built_in_trixie();
  c.image_record->id = "sha256:bbbbbbbbbbbbbbbb2222";
  Decision d = decide(c, {trixie_offer(k_trixie)}, Policy::pinned);
  ASSERT_TRUE(d.stale);
  EXPECT_FALSE(d.make_image);
  EXPECT_EQ(d.reason, "orchestrate/cuda:12.4-trixie was made again since this set was built (aaaaaaaaaaaa -> "
                      "bbbbbbbbbbbb)");
  // The host-mount image's digest names the host's toolkit after the ID.
  c.image_record->id = "sha256:aaaaaaaaaaaaaaaa1111";
  c.image_digest = "sha256:aaaaaaaaaaaaaaaa1111 + host cuda 13.0.88";
  d = decide(c, {trixie_offer(k_trixie)}, Policy::pinned);
  EXPECT_FALSE(d.stale) << d.reason;
}

TEST(WatchDecide, PoliciesParseByName) {
  for (Policy p : {Policy::patch, Policy::minor, Policy::major, Policy::pinned})
    EXPECT_EQ(parse_policy(to_string(p)), p);
  EXPECT_FALSE(parse_policy("latest"));
}

}  // namespace
}  // namespace orc::watch
