#include "orchestrator/compat/image_catalog.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace orc::compat {
namespace {

using util::Version;

Version v(std::string_view text) { return Version::parse(text).value(); }

const Toolkit& tk(std::string_view version) {
  const Toolkit* t = find_toolkit(v(version));
  if (!t) throw std::runtime_error("no toolkit " + std::string(version));
  return *t;
}

const CudnnRelease* dnn(std::string_view version) {
  const CudnnRelease* r = find_cudnn(v(version));
  if (!r) throw std::runtime_error("no cuDNN " + std::string(version));
  return r;
}

const HostCuda k_host_13{.toolkit = v("13.0.88")};

std::string official_tag(std::string_view toolkit, bool with_cudnn) {
  const OfficialImage* image = find_official_image(v(toolkit));
  return image ? image->tag(with_cudnn) : "none";
}

// The tag grammar of section 7, cuDNN part before "devel", per era.
TEST(ImageCatalog, OfficialTagsFollowTheSchemeAndTheSuffixRule) {
  EXPECT_EQ(official_tag("11.8", true), "11.8.0-cudnn8-devel-ubuntu22.04");
  EXPECT_EQ(official_tag("11.8", false), "11.8.0-devel-ubuntu22.04");
  EXPECT_EQ(official_tag("12.2", true), "12.2.2-cudnn8-devel-ubuntu22.04");
  EXPECT_EQ(official_tag("12.3", true), "12.3.2-cudnn9-devel-ubuntu22.04");
  EXPECT_EQ(official_tag("12.4", true), "12.4.1-cudnn-devel-ubuntu22.04");
  EXPECT_EQ(official_tag("12.9", true), "12.9.1-cudnn-devel-ubuntu22.04");
  EXPECT_EQ(official_tag("13.0", true), "13.0.3-cudnn-devel-ubuntu22.04");
  // 12.8.2 replaced 12.8.1 and has no cudnn flavour: the plain devel tag.
  EXPECT_EQ(official_tag("12.8", true), "12.8.2-devel-ubuntu22.04");
  // Ubuntu 22.04 images start at 11.7.1; older minors are on 20.04.
  EXPECT_EQ(official_tag("11.7", true), "11.7.1-cudnn8-devel-ubuntu22.04");
  EXPECT_EQ(official_tag("11.6", true), "11.6.2-cudnn8-devel-ubuntu20.04");
  EXPECT_EQ(official_tag("11.0", false), "11.0.3-devel-ubuntu20.04");
}

TEST(ImageCatalog, MinorsWithoutAnImageHaveNone) {
  for (std::string_view minor : {"12.7", "11.3", "13.3", "13.4", "10.2", "9.0"})
    EXPECT_EQ(find_official_image(v(minor)), nullptr) << minor;
}

TEST(ImageCatalog, OneRowPerMinorAscendingWithTheFlavourOfItsEra) {
  const auto images = official_images();
  ASSERT_FALSE(images.empty());
  for (std::size_t i = 1; i < images.size(); ++i)
    EXPECT_LT(images[i - 1].cuda.truncated(2), images[i].cuda.truncated(2)) << images[i].cuda.str();
  for (const OfficialImage& image : images) {
    // Every listed tag is the patch level the registries keep: x.y.z.
    EXPECT_EQ(image.cuda.size(), 3u) << image.cuda.str();
    // Every minor we list is a released row of the toolkit table.
    const Toolkit* t = find_toolkit(image.cuda);
    ASSERT_NE(t, nullptr) << image.cuda.str();
    EXPECT_TRUE(t->released);
    // A recorded cuDNN has the major of the flavour its tag names.
    if (!image.cudnn_version.empty()) {
      const std::string major = image.cudnn_version.substr(0, 1) == "8" ? "cudnn8" : "cudnn9";
      const std::string_view flavour = cudnn_flavor(image.cuda);
      EXPECT_TRUE(flavour == major || (flavour == "cudnn" && major == "cudnn9")) << image.cuda.str();
    }
  }
  EXPECT_EQ(cudnn_flavor(v("11.0")), "cudnn8");
  EXPECT_EQ(cudnn_flavor(v("12.2.2")), "cudnn8");
  EXPECT_EQ(cudnn_flavor(v("12.3")), "cudnn9");
  EXPECT_EQ(cudnn_flavor(v("12.4.1")), "cudnn");
  EXPECT_EQ(cudnn_flavor(v("13.2")), "cudnn");
}

TEST(ImageCatalog, OfflineImagesByNameOrReference) {
  const OfflineImage* image = find_offline_image("11.8-bookworm");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->reference(), "orchestrate/cuda:11.8-bookworm");
  EXPECT_EQ(image->suite, "bookworm");
  EXPECT_NE(image->components.find("non-free"), std::string_view::npos);
  EXPECT_EQ(find_offline_image("orchestrate/cuda:12.4-trixie"), find_offline_image("12.4-trixie"));
  EXPECT_EQ(find_offline_image("12.4-trixie")->suite, "trixie");
  EXPECT_EQ(find_offline_image("12.4-bookworm"), nullptr);
  const OfflineImage* host = find_offline_image("host-bookworm");
  ASSERT_NE(host, nullptr);
  EXPECT_TRUE(host->host_mount);
  EXPECT_TRUE(host->toolkit.empty());  // the host's, found at run time
  EXPECT_EQ(offline_image_names(), (std::vector<std::string>{"11.8-bookworm", "12.4-trixie", "host-bookworm"}));
  // Every offline toolkit's compiler is one that toolkit accepts.
  EXPECT_LE(11, tk("11.8").max_gcc);
  EXPECT_LE(13, tk("12.4").max_gcc);
}

TEST(ImageCatalog, OfflineFirstPicksTheDebianImageAndSaysItLacksCudnn) {
  const auto choice = choose_image(tk("11.8"), dnn("8.9"));
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->reference, "orchestrate/cuda:11.8-bookworm");
  EXPECT_EQ(choice->source, ImageSource::offline);
  EXPECT_EQ(choice->toolkit, v("11.8"));
  EXPECT_FALSE(choice->cudnn);
  EXPECT_TRUE(choice->mounts.empty());
  EXPECT_EQ(choice->host_compiler, "g++-11");
  ASSERT_EQ(choice->notes.size(), 1u);
  EXPECT_EQ(choice->notes[0],
            "orchestrate/cuda:11.8-bookworm carries no cuDNN (the plan chose 8.9): the build must bring its own");
  // Without cuDNN in the plan there is nothing to say.
  EXPECT_TRUE(choose_image(tk("12.4"), nullptr)->notes.empty());
  EXPECT_EQ(choose_image(tk("12.4"), nullptr)->reference, "orchestrate/cuda:12.4-trixie");
}

TEST(ImageCatalog, HostMountServesOnlyTheHostsToolkit) {
  const auto choice = choose_image(tk("13.0"), nullptr, ImagePreference::offline_first, k_host_13);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->reference, "orchestrate/cuda:host-bookworm");
  EXPECT_EQ(choice->source, ImageSource::host_mount);
  EXPECT_EQ(choice->toolkit, v("13.0.88"));
  ASSERT_EQ(choice->mounts.size(), 1u);
  EXPECT_EQ(choice->mounts[0].host, "/usr/local/cuda");
  EXPECT_EQ(choice->mounts[0].container, "/usr/local/cuda");
  EXPECT_TRUE(choice->mounts[0].read_only);
  EXPECT_EQ(choice->nvcc, "/usr/local/cuda/bin/nvcc");
  // Another toolkit, or an unknown host: the official tag instead.
  const auto other = choose_image(tk("12.9"), nullptr, ImagePreference::offline_first, k_host_13);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->source, ImageSource::official);
  EXPECT_EQ(other->reference, "docker.io/nvidia/cuda:12.9.1-devel-ubuntu22.04");
  EXPECT_EQ(choose_image(tk("13.0"), nullptr)->source, ImageSource::official);
  // A host whose toolkit a Debian image also has: the self-contained one.
  const auto same = choose_image(tk("11.8"), nullptr, ImagePreference::offline_first, HostCuda{.toolkit = v("11.8")});
  EXPECT_EQ(same->reference, "orchestrate/cuda:11.8-bookworm");
}

TEST(ImageCatalog, OfficialPreferenceSaysWhichCudnnTheImageCarries) {
  auto choice = choose_image(tk("12.4"), dnn("9.1"), ImagePreference::official);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->reference, "docker.io/nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04");
  EXPECT_EQ(choice->cudnn, "9.1.0.70");
  EXPECT_TRUE(choice->notes.empty());
  // The plan's cuDNN differs from the image's: said, not hidden.
  choice = choose_image(tk("12.4"), dnn("9.5"), ImagePreference::official);
  ASSERT_EQ(choice->notes.size(), 1u);
  EXPECT_EQ(choice->notes[0],
            "docker.io/nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04 carries cuDNN 9.1.0.70, not the planned 9.5");
  // 12.8.2 has no cudnn flavour.
  choice = choose_image(tk("12.8"), dnn("9.8"), ImagePreference::official);
  EXPECT_EQ(choice->reference, "docker.io/nvidia/cuda:12.8.2-devel-ubuntu22.04");
  EXPECT_FALSE(choice->cudnn);
  ASSERT_EQ(choice->notes.size(), 1u);
  EXPECT_NE(choice->notes[0].find("carries no cuDNN (the plan chose 9.8)"), std::string::npos);
  // An unrecorded exact version: the major, said so.
  choice = choose_image(tk("11.4"), dnn("8.2"), ImagePreference::official);
  EXPECT_EQ(choice->reference, "docker.io/nvidia/cuda:11.4.3-cudnn8-devel-ubuntu20.04");
  EXPECT_EQ(choice->cudnn, "8");
  EXPECT_NE(choice->notes.at(0).find("not recorded"), std::string::npos);
  // What a site with registry access would use, whatever the preference.
  EXPECT_EQ(official_choice(tk("13.0"), nullptr)->reference, "docker.io/nvidia/cuda:13.0.3-devel-ubuntu22.04");
  EXPECT_EQ(official_tag("13.0", true), "13.0.3-cudnn-devel-ubuntu22.04");
  EXPECT_EQ(find_official_image(v("12.4"))->reference(true, k_ngc_cuda),
            "nvcr.io/nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04");
}

TEST(ImageCatalog, NoImageForAToolkitNobodyShips) {
  EXPECT_FALSE(choose_image(tk("12.7"), nullptr));
  EXPECT_FALSE(choose_image(tk("13.3"), nullptr, ImagePreference::official, k_host_13));
  // An official preference still falls back to the offline images.
  EXPECT_EQ(choose_image(tk("11.3"), nullptr, ImagePreference::official, HostCuda{.toolkit = v("11.3")})->source,
            ImageSource::host_mount);
  EXPECT_FALSE(choose_image(tk("10.2"), nullptr));
  // ...unless it is the host's own.
  EXPECT_EQ(choose_image(tk("13.3"), nullptr, ImagePreference::official, HostCuda{.toolkit = v("13.3.1")})->reference,
            "orchestrate/cuda:host-bookworm");
}

TEST(ImageCatalog, ParsesNvccVersionOutput) {
  EXPECT_EQ(parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\n"
                               "Cuda compilation tools, release 13.0, V13.0.88\n"
                               "Build cuda_13.0.r13.0/compiler.36424714_0\n"),
            v("13.0.88"));
  EXPECT_EQ(parse_nvcc_version("Cuda compilation tools, release 11.8, V11.8.89\n"), v("11.8.89"));
  EXPECT_EQ(parse_nvcc_version("Cuda compilation tools, release 12.4\n"), v("12.4"));
  EXPECT_FALSE(parse_nvcc_version("bash: nvcc: command not found"));
  EXPECT_FALSE(parse_nvcc_version(""));
}

TEST(ImageCatalog, PreferenceNames) {
  EXPECT_EQ(parse_image_preference("official"), ImagePreference::official);
  EXPECT_EQ(parse_image_preference("offline"), ImagePreference::offline_first);
  EXPECT_FALSE(parse_image_preference("registry"));
  EXPECT_EQ(to_string(ImageSource::host_mount), "host_mount");
}

}  // namespace
}  // namespace orc::compat
