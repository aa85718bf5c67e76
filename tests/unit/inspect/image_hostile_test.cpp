// Hostile layers (issue 28), each made here by a few lines of code: small
// compressed, huge once read. Bill-of-materials files of zeros, entry names
// of 60 KB, a tree 20,000 directories deep, links out of the image. The
// scans that once took gigabytes run in a child whose address space may
// grow by 512 MiB; the merge that once took 20 minutes, in one killed after
// a generous while.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "orchestrator/inspect/bom.hpp"
#include "orchestrator/inspect/image.hpp"
#include "tests/unit/inspect/bounded_child.hpp"
#include "tests/unit/inspect/layer_writer.hpp"

namespace orc::inspect {
namespace {

using namespace testing;

constexpr std::uint64_t k_extra = 512ull << 20;
constexpr int k_hang = 300;

std::string numbered(std::string_view stem, int i) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%05d", i);
  return std::string(stem) + digits;
}

// A dpkg status.d file that names cuDNN, then 120 files of 32 MiB of zeros
// (dpkg's status.d keeps one file per package): 3.8 GB read, a few hundred
// KB of zstd.
std::string zeros_layer() {
  return write_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_ZSTD, [](struct archive* a) {
    write_entry(a, {.path = "var/lib/dpkg/status.d/libcudnn9",
                    .data = "Package: libcudnn9-cuda-12\nStatus: install ok installed\nVersion: 9.1.0.70-1\n"});
    const std::string zeros(1u << 20, '\0');
    for (int i = 0; i < 120; ++i) {
      struct archive_entry* h = archive_entry_new();
      archive_entry_set_pathname(h, numbered("var/lib/dpkg/status.d/zero", i).c_str());
      archive_entry_set_filetype(h, AE_IFREG);
      archive_entry_set_perm(h, 0644);
      archive_entry_set_size(h, 32 << 20);
      archive_write_header(a, h);
      for (int mib = 0; mib < 32; ++mib) archive_write_data(a, zeros.data(), zeros.size());
      archive_entry_free(h);
    }
  });
}

// What the zero layer's scan must say: cuDNN's file read, the zeros past
// 256 MiB left unread and named.
std::string check_zeros(const ImageContent& content, const std::string& where) {
  const auto cudnn = content.evidence.find("/var/lib/dpkg/status.d/libcudnn9");
  if (cudnn == content.evidence.end() || cudnn->second.packages.at("libcudnn9-cuda-12") != "9.1.0.70")
    return "cuDNN's status.d file was not read";
  if (content.evidence.size() != 1) return "files of zeros left evidence";
  // The cuDNN file and seven files of zeros fit in 256 MiB; the eighth not.
  const std::string expected =
      "113 bill-of-materials files not read (the image's pass 268435456 bytes in all): "
      "'/var/lib/dpkg/status.d/zero00007' in " +
      where + ", '/var/lib/dpkg/status.d/zero00008' in " + where;
  if (content.unread.size() != 1 || !content.unread[0].starts_with(expected) ||
      !content.unread[0].ends_with(", and 108 more; the CUDA versions they hold are not in the bill of materials"))
    return "unread: " + (content.unread.empty() ? std::string("nothing") : content.unread[0]);
  return {};
}

TEST(ImageHostile, BomFilesOfZerosAreReadWithinTheirCapAndWhatWasNotReadIsSaid) {
  const std::string layer = zeros_layer();
  ASSERT_LT(layer.size(), 1u << 20);
  const std::string failure = run_bounded(
      [&]() -> std::string {
        ImageScanner scanner(InspectOptions{});
        if (auto added = scanner.add_layer("sha256:zeros", from(layer)); !added) return added.error().message;
        auto content = scanner.finish({"sha256:zeros"});
        if (!content) return content.error().message;
        return check_zeros(*content, "layer sha256:zeros");
      },
      k_extra, k_hang);
  EXPECT_EQ(failure, "");
}

TEST(ImageHostile, TheZeroLayerInsideAnImageArchiveAsWell) {
  // docker://'s path: the layer inside the archive the engine exports.
  const std::string layer = zeros_layer();
  const std::string archive =
      make_tar({{"blobs/sha256/zeros", layer},
                {"blobs/sha256/config", R"({"rootfs":{"diff_ids":[]}})"},
                {"manifest.json", R"([{"Config":"blobs/sha256/config","Layers":["blobs/sha256/zeros"]}])"}});
  const std::string failure = run_bounded(
      [&]() -> std::string {
        auto image = scan_image_archive(from(archive), InspectOptions{});
        if (!image) return image.error().message;
        return check_zeros(image->content, "layer blobs/sha256/zeros");
      },
      k_extra, k_hang);
  EXPECT_EQ(failure, "");
}

TEST(ImageHostile, AVersionJsonLargerThanNvidiasIsNotReadAndSaidSo) {
  std::string json = R"({"cuda_cudart":{"name":"CUDA Runtime","version":"12.4.127"},"pad":")";
  json += std::string(2u << 20, 'p') + "\"}";
  ImageScanner scanner(InspectOptions{});
  const std::string layer = make_tar({{"usr/local/cuda-12.4/version.json", json}}, ARCHIVE_FILTER_GZIP);
  ASSERT_TRUE(scanner.add_layer("sha256:json", from(layer)));
  auto content = scanner.finish({"sha256:json"});
  ASSERT_TRUE(content) << content.error().message;
  EXPECT_TRUE(content->evidence.empty());
  EXPECT_EQ(content->unread,
            std::vector<std::string>{"1 bill-of-materials file not read (a version.json over 1048576 bytes is none "
                                     "of NVIDIA's): '/usr/local/cuda-12.4/version.json' in layer sha256:json (2097221 "
                                     "bytes); the CUDA versions they hold are not in the bill of materials"});
}

// `count` entries named by 60 KB each: 20,000 are 1.2 GB of names in a
// small layer.
std::string long_names_layer(bool shared_directory, int count) {
  return write_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_ZSTD, [&](struct archive* a) {
    const std::string padding(60000, 'x');
    for (int i = 0; i < count; ++i)
      write_entry(
          a, {.path = shared_directory ? padding + "/" + numbered("f", i) : numbered("n", i) + padding, .data = "x"});
  });
}

TEST(ImageHostile, LongNamesPastTheirCapAreRefusedWithTheLayerNamed) {
  const std::string layer = long_names_layer(false, 20000);
  ASSERT_LT(layer.size(), 4u << 20);
  const std::string failure = run_bounded(
      [&]() -> std::string {
        ImageScanner scanner(InspectOptions{});
        auto added = scanner.add_layer("sha256:long", from(layer));
        if (added) return "the layer was taken";
        const std::string& m = added.error().message;
        if (!added.error().refused) return "not refused: " + m;
        if (!m.starts_with("layer sha256:long: entry 'n0") || m.find("...' (60006 bytes): the names of the image's "
                                                                     "entries pass 67108864 bytes: no image this tool "
                                                                     "reads; refused") == std::string::npos)
          return m;
        return {};
      },
      k_extra, k_hang);
  EXPECT_EQ(failure, "");
}

TEST(ImageHostile, LongNamesUnderOneDirectoryAreKeptOnce) {
  // Names of 60 KB, but under one 60 KB directory: each is a short
  // component under it, and the layer is an image's like any other. 6,000
  // of them (360 MB of names) did not fit in 512 MiB when names were kept
  // whole, three times over.
  const std::string layer = long_names_layer(true, 6000);
  const std::string failure = run_bounded(
      [&]() -> std::string {
        ImageScanner scanner(InspectOptions{});
        if (auto added = scanner.add_layer("sha256:long", from(layer)); !added) return added.error().message;
        auto content = scanner.finish({"sha256:long"});
        if (!content) return content.error().message;
        if (!content->paths.empty() || !content->files.empty()) return "kept paths it does not read";
        return {};
      },
      k_extra, k_hang);
  EXPECT_EQ(failure, "");
}

TEST(ImageHostile, ATreeTwentyThousandDirectoriesDeepMerges) {
  std::string deepest;
  const std::string lower =
      write_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_ZSTD, [&](struct archive* a) {
        std::string path;
        for (int i = 0; i < 20000; ++i) {
          path += path.empty() ? "d" : "/d";
          write_entry(a, {.path = path + "/", .type = AE_IFDIR});
        }
        deepest = path + "/libcudart.so.12";
        write_entry(a, {.path = deepest, .data = "not an ELF"});
      });
  // The upper layer deletes the tree below the second level and writes one
  // file back at the bottom: that file is all that is left.
  const std::string bottom = deepest.substr(0, deepest.rfind('/')) + "/libcufft.so.11";
  const std::string upper = make_tar({{"d/d/.wh.d", ""}, {bottom, "not an ELF"}});
  const std::string failure = run_bounded(
      [&]() -> std::string {
        ImageScanner scanner(InspectOptions{});
        if (auto added = scanner.add_layer("lower", from(lower)); !added) return added.error().message;
        if (auto added = scanner.add_layer("upper", from(upper)); !added) return added.error().message;
        auto content = scanner.finish({"lower", "upper"});
        if (!content) return content.error().message;
        if (content->paths != std::vector<std::string>{"/" + bottom})
          return std::to_string(content->paths.size()) + " paths, not the bottom one";
        return {};
      },
      k_extra, k_hang);
  EXPECT_EQ(failure, "");
}

TEST(ImageHostile, ALinkOutOfTheImageIsNoBundledLibrary) {
  const std::string layer = make_tar({
      {"usr/lib/libcudart.so.12", "", AE_IFLNK, "/etc/shadow"},
      {"usr/lib/libcufft.so.11", "", AE_IFLNK, "../../../../../../etc/shadow"},
      {"usr/lib/libnccl.so.2", "", AE_IFLNK, "libnccl.so.2"},  // a loop
      {"usr/lib/libcublas.so.12.4.5.8", "not an ELF"},
      // Through a link to a directory, as merged-/usr images have them.
      {"lib", "", AE_IFLNK, "usr/lib"},
      {"usr/lib/libcublas.so.12", "", AE_IFLNK, "/lib/./libcublas.so.12.4.5.8"},
  });
  ImageScanner scanner(InspectOptions{});
  ASSERT_TRUE(scanner.add_layer("sha256:links", from(layer)));
  auto content = scanner.finish({"sha256:links"});
  ASSERT_TRUE(content) << content.error().message;
  EXPECT_EQ(content->dangling,
            (std::map<std::string, std::string>{{"/usr/lib/libcudart.so.12", "/etc/shadow"},
                                                {"/usr/lib/libcufft.so.11", "../../../../../../etc/shadow"},
                                                {"/usr/lib/libnccl.so.2", "libnccl.so.2"}}));
  std::map<std::string, Component> by;
  for (const auto& c : bill_of_materials(*content)) by[c.key] = c;
  EXPECT_EQ(by.count("cudart"), 0u);
  EXPECT_EQ(by.count("cufft"), 0u);
  EXPECT_EQ(by.count("nccl"), 0u);
  EXPECT_EQ(by["cublas"].version, "12.4.5.8");
  EXPECT_EQ(by["cublas"].files, std::vector<std::string>{"/usr/lib/libcublas.so.12.4.5.8"});

  // The same link where the image holds a file at its target: the image's
  // own file, not the host's.
  const std::string with_target =
      make_tar({{"etc/shadow", "x"}, {"usr/lib/libcudart.so.12", "", AE_IFLNK, "/etc/shadow"}});
  ImageScanner again(InspectOptions{});
  ASSERT_TRUE(again.add_layer("sha256:t", from(with_target)));
  auto inside = again.finish({"sha256:t"});
  ASSERT_TRUE(inside);
  EXPECT_TRUE(inside->dangling.empty());
}

TEST(ImageHostile, AnArchiveOfManyLayersOrMuchJsonIsRefused) {
  const std::string empty(1024, '\0');  // a layer that changes nothing
  ImageScanner scanner(InspectOptions{});
  for (std::size_t i = 0; i < ImageScanner::k_max_layers; ++i)
    ASSERT_TRUE(scanner.add_layer("l" + std::to_string(i), from(empty))) << i;
  auto refused = scanner.add_layer("one-more", from(empty));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "more than 4096 layers: no image this tool reads; refused");

  // JSON files are kept until manifest.json names the config: not without end.
  std::vector<testing::Entry> entries;
  const std::string json = "{\"pad\":\"" + std::string(7u << 20, 'p') + "\"}";
  for (int i = 0; i < 5; ++i) entries.push_back({.path = numbered("blobs/sha256/j", i), .data = json});
  const std::string archive = make_tar(entries);
  auto image = scan_image_archive(from(archive), InspectOptions{});
  ASSERT_FALSE(image);
  EXPECT_TRUE(image.error().refused);
  EXPECT_EQ(image.error().message,
            "the image archive holds more than 33554432 bytes of JSON files (at 'blobs/sha256/j00004'): not an image "
            "`docker save` wrote; refused");
}

}  // namespace
}  // namespace orc::inspect
