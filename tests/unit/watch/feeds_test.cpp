// The feeds' parsers: nvidia/cuda tags as the registries list them, NVIDIA's
// redistrib manifests and the index pages that link them.
#include "orchestrator/watch/feeds.hpp"

#include <gtest/gtest.h>

#include "tests/unit/net/fake_transport.hpp"

namespace orc::watch {
namespace {

util::Version v(std::string_view text) { return *util::Version::parse(text); }

TEST(CudaTags, TheOfficialSchemeParses) {
  auto t = parse_cuda_tag("13.0.2-cudnn-devel-ubuntu24.04");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->toolkit, v("13.0.2"));
  EXPECT_EQ(t->cudnn, "cudnn");
  EXPECT_EQ(t->flavour, "devel");
  EXPECT_EQ(t->os, "ubuntu24.04");
  t = parse_cuda_tag("11.8.0-cudnn8-runtime-ubuntu22.04");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->cudnn, "cudnn8");
  EXPECT_EQ(t->flavour, "runtime");
  t = parse_cuda_tag("12.6.3-base-ubuntu24.04");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->cudnn);
  EXPECT_EQ(t->flavour, "base");
  for (const char* os : {"12.9.1-devel-ubi9", "12.9.1-devel-rockylinux9", "11.8.0-devel-centos7"})
    EXPECT_TRUE(parse_cuda_tag(os)) << os;
}

TEST(CudaTags, OtherTagsAreNotOffers) {
  for (const char* tag : {"latest", "13.0.2", "13.0-devel-ubuntu24.04", "13.0.2-tensorrt-devel-ubuntu24.04",
                          "13.0.2-cudnn-devel", "13.0.2-cudnn-sdk-ubuntu24.04", "13.0.2-cudnnx-devel-ubuntu24.04",
                          "13.0.2-devel-24.04", "13.0.2-cudnn-devel-ubuntu24.04-extra", "13.0.2--devel-ubuntu24.04",
                          "-13.0.2-devel-ubuntu24.04", "13.0.2-devel-ubuntu24.04-"})
    EXPECT_FALSE(parse_cuda_tag(tag)) << tag;
}

TEST(CudaTags, TheFilterKeepsOneFlavourOsAndCudnnChoice) {
  const TagFilter devel{.flavour = "devel", .os = "ubuntu22.04", .cudnn = false};
  EXPECT_TRUE(devel.keeps(*parse_cuda_tag("12.4.1-devel-ubuntu22.04")));
  EXPECT_FALSE(devel.keeps(*parse_cuda_tag("12.4.1-cudnn-devel-ubuntu22.04")));
  EXPECT_FALSE(devel.keeps(*parse_cuda_tag("12.4.1-devel-ubuntu20.04")));
  EXPECT_FALSE(devel.keeps(*parse_cuda_tag("12.4.1-runtime-ubuntu22.04")));
  const TagFilter cudnn{.flavour = "devel", .os = "", .cudnn = true};
  EXPECT_TRUE(cudnn.keeps(*parse_cuda_tag("12.4.1-cudnn-devel-ubuntu22.04")));
  EXPECT_TRUE(cudnn.keeps(*parse_cuda_tag("11.8.0-cudnn8-devel-ubuntu20.04")));
}

// The shape of NVIDIA's manifests (redistrib_9.23.0.json and a CUDA one),
// shortened to the fields the feed reads and one it ignores.
constexpr const char* k_cudnn = R"({
    "release_date": "2026-05-29",
    "release_label": "9.23.0",
    "release_product": "cudnn",
    "cudnn": {
        "name": "NVIDIA CUDA Deep Neural Network library",
        "license": "cudnn",
        "version": "9.23.0.39",
        "linux-x86_64": {"cuda12": {"relative_path": "cudnn/linux-x86_64/x.tar.xz"},
                         "cuda13": {"relative_path": "cudnn/linux-x86_64/y.tar.xz"}},
        "cuda_variant": ["12", "13"]
    }
})";
constexpr const char* k_cuda = R"({
    "release_date": "2026-11-04",
    "release_label": "13.5.0",
    "release_product": "cuda",
    "cuda_cccl": {"name": "CXX Core Compute Libraries", "version": "13.5.37"},
    "cuda_nvcc": {"name": "CUDA NVCC", "version": "13.5.37"}
})";

TEST(Redistrib, ManifestsGiveProductLabelDateAndComponents) {
  auto m = parse_redistrib(k_cudnn);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->product, "cudnn");
  EXPECT_EQ(m->label, v("9.23.0"));
  EXPECT_EQ(m->release_date, "2026-05-29");
  EXPECT_EQ(m->component("cudnn"), "9.23.0.39");
  EXPECT_EQ(m->cuda_variants, (std::vector<std::string>{"12", "13"}));
  m = parse_redistrib(k_cuda);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->product, "cuda");
  EXPECT_EQ(m->component("cuda_nvcc"), "13.5.37");
  EXPECT_FALSE(m->component("cudnn"));
  EXPECT_FALSE(parse_redistrib("{\"release_date\": \"2026-11-04\"}"));
  EXPECT_FALSE(parse_redistrib("[1, 2]"));
  EXPECT_FALSE(parse_redistrib("{\"release_label\": \"thirteen\"}"));
}

TEST(Redistrib, ListingsLinkTheManifests) {
  // NVIDIA's index (https://developer.download.nvidia.com/compute/cudnn/redist/)
  // and Python's http.server both link each file by a relative href.
  const std::string listing =
      R"(<a href="../">../</a><a href="cudnn/">cudnn/</a><a href="redistrib_9.22.0.json">redistrib_9.22.0.json</a>)"
      R"(<a href="redistrib_8.9.7.29.json">x</a><a href="/compute/cudnn/redist/redistrib_9.23.0.json">y</a>)"
      R"(<a href="redistrib_9.22.0.json">again</a><a href="redistrib_latest.json">z</a><a href="feature_9.1.json">w</a>)";
  EXPECT_EQ(redistrib_names(listing),
            (std::vector<std::string>{"redistrib_9.22.0.json", "redistrib_8.9.7.29.json", "redistrib_9.23.0.json"}));
  EXPECT_TRUE(redistrib_names("<html>nothing</html>").empty());
}

// A redist index page as `listing`, each manifest it names as `manifest`.
std::shared_ptr<net::testing::FakeTransport> redist_site(std::string listing, std::string manifest) {
  auto transport = std::make_shared<net::testing::FakeTransport>();
  transport->handle_with([listing, manifest](const net::Request& request) {
    return net::testing::answer("GET", request.url, 200, request.url.ends_with("/") ? listing : manifest);
  });
  return transport;
}

constexpr const char* k_base = "https://developer.download.nvidia.com/compute/cuda/redist/";
const std::string k_expected =
    "expected NVIDIA's redistributable index, a directory such as "
    "https://developer.download.nvidia.com/compute/cuda/redist/ whose page links one redistrib_X.Y.Z.json per "
    "release: check this 'watch: redist' URL";

// Issue 28: a page with no manifest links was "feed ok (0 offers)".
TEST(RedistFeed, APageThatLinksNoManifestIsAFailedPollThatSaysWhatWasExpected) {
  auto offers = redist_feed(k_base, redist_site("<html><a href=\"cuda_nvcc/\">cuda_nvcc/</a></html>", ""))->poll();
  ASSERT_FALSE(offers);
  EXPECT_EQ(offers.error(),
            std::string("redist ") + k_base + ": the page links no redistrib_X.Y.Z.json manifest; " + k_expected);
  // Manifests of something else (Nsight's, say).
  offers = redist_feed(k_base, redist_site(R"(<a href="redistrib_2025.1.0.json">x</a>)",
                                           R"({"release_label": "2025.1.0", "release_product": "nsight"})"))
               ->poll();
  ASSERT_FALSE(offers);
  EXPECT_EQ(offers.error(), std::string("redist ") + k_base +
                                ": its one manifest names no CUDA or cuDNN release (release_product \"cuda\", or "
                                "\"cudnn\" with cuda_variant); " +
                                k_expected);
}

// Issue 28: an index may name 4,096 manifests, a GET each; now one naming
// more than the feed follows is refused before any of them is read.
TEST(RedistFeed, AnIndexLinkingMoreManifestsThanAFeedFollowsIsRefusedUnread) {
  std::string listing;
  for (std::size_t i = 0; i <= k_max_redist_manifests; ++i)
    listing += "<a href=\"redistrib_13.0." + std::to_string(i) + ".json\">m</a>\n";
  const auto transport = redist_site(listing, R"({"release_label": "13.0.0", "release_product": "cuda"})");
  const auto offers = redist_feed(k_base, transport)->poll();
  ASSERT_FALSE(offers);
  EXPECT_EQ(offers.error(), std::string("redist ") + k_base +
                                ": the page links 513 redistrib_*.json manifests, more than the 512 a feed follows "
                                "(NVIDIA's CUDA index links about 150); none was read: " +
                                k_expected);
  EXPECT_EQ(transport->requests().size(), 1u);  // the page alone
}

TEST(RegistryFeed, ARepositoryWithoutATagTheEntryKeepsIsAFailedPoll) {
  auto transport = std::make_shared<net::testing::FakeTransport>();
  transport->handle_with([](const net::Request& request) {
    if (request.url.find("/tags/list") == std::string::npos) return net::testing::answer("GET", request.url, 404);
    return net::testing::answer(
        "GET", request.url, 200,
        R"({"name": "nvidia/cuda", "tags": ["latest", "13.0.2-runtime-ubuntu22.04", "13.0.2-devel-ubuntu24.04"]})");
  });
  const auto offers = registry_feed({.url = "http://127.0.0.1:5000/nvidia/cuda", .retry = {.max_attempts = 1}},
                                    TagFilter{.flavour = "devel", .os = "ubuntu22.04", .cudnn = false}, transport)
                          ->poll();
  ASSERT_FALSE(offers);
  EXPECT_EQ(offers.error(),
            "registry 127.0.0.1:5000/nvidia/cuda: none of its 3 tags is an nvidia/cuda-scheme tag this entry keeps "
            "(flavour devel, os ubuntu22.04, without cuDNN); expected tags such as 13.0.2-devel-ubuntu22.04: check "
            "url, flavour, os and cudnn of this 'watch: images' entry");
}

}  // namespace
}  // namespace orc::watch
