// Images read as layer streams: the layer order from the archive's
// manifest.json, whiteouts, replacement, refusals, and the bill of
// materials. Layers are made with libarchive's writer; the device code is
// a real nvcc-built cubin's fatbin from the binary fixtures.
#include "orchestrator/inspect/image.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include "tests/unit/inspect/layer_writer.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "orchestrator/inspect/bom.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"

namespace orc::inspect {
namespace {

using namespace testing;

// A ustar header that declares `size` bytes and has none after it (a
// writer would pad the data out): the layer a hostile registry serves.
std::string lying_header(const std::string& name, std::uint64_t size) {
  std::string h(512, '\0');
  std::memcpy(h.data(), name.data(), name.size());
  std::snprintf(h.data() + 100, 8, "%07o", 0644);
  std::snprintf(h.data() + 124, 12, "%011llo", static_cast<unsigned long long>(size));
  std::snprintf(h.data() + 136, 12, "%011o", 0);
  h[156] = '0';
  std::memcpy(h.data() + 257,
              "ustar\0"
              "00",
              8);
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h.data() + 148, 8, "%06o", sum);
  return h + std::string(1024, '\0');
}

// A standalone fatbin with one sm_80 cubin (the binary fixtures' builders).
std::string fatbin_sm80() {
  const Buffer fatbin = fatbin_container({fatbin_entry({.kind = 2, .arch = 80, .payload = build_cubin(80, false)})});
  return std::string(reinterpret_cast<const char*>(fatbin.data()), fatbin.size());
}

TEST(ImageScanner, LayersAppliedInTheGivenOrderWhateverOrderTheyStreamed) {
  const std::string code = fatbin_sm80();
  const std::string lower = make_tar({{"usr/", "", AE_IFDIR},
                                      {"usr/lib/", "", AE_IFDIR},
                                      {"usr/lib/libkeep.fatbin", code},
                                      {"usr/lib/libgone.fatbin", code},
                                      {"usr/lib/libswap.fatbin", code}});
  const std::string upper =
      make_tar({{"usr/lib/.wh.libgone.fatbin", ""}, {"usr/lib/libswap.fatbin", "plain text"}}, ARCHIVE_FILTER_GZIP);
  ImageScanner scanner(InspectOptions{.modules = true});
  // The upper layer streams first, as an image archive may order them.
  ASSERT_TRUE(scanner.add_layer("upper", from(upper)));
  ASSERT_TRUE(scanner.add_layer("lower", from(lower)));
  auto content = scanner.finish({"lower", "upper"});
  ASSERT_TRUE(content) << content.error().message;
  ASSERT_EQ(content->files.size(), 1u);
  EXPECT_EQ(content->files[0].path, "/usr/lib/libkeep.fatbin");
  EXPECT_TRUE(content->files[0].sass.contains(arch::ComputeCapability(8, 0)));
  EXPECT_EQ(content->hidden,
            (std::vector<std::string>{"/usr/lib/libgone.fatbin (layer 1)", "/usr/lib/libswap.fatbin (layer 1)"}));
  EXPECT_EQ(content->layers, 2u);
  EXPECT_EQ(content->layer_bytes, lower.size() + upper.size());

  // The other order: the whiteout is in the lower layer and deletes nothing.
  ImageScanner again(InspectOptions{.modules = true});
  ASSERT_TRUE(again.add_layer("upper", from(upper)));
  ASSERT_TRUE(again.add_layer("lower", from(lower)));
  auto reversed = again.finish({"upper", "lower"});
  ASSERT_TRUE(reversed);
  EXPECT_EQ(reversed->files.size(), 3u);
}

TEST(ImageScanner, HostileEntriesAreRefusedWithTheLayerAndEntryNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"has a '..' component", make_tar({{"usr/../../etc/evil", "x"}})},
      {"a link out of the image", make_tar({{"usr/passwd", "", AE_IFREG, "../../etc/passwd"}})},
      {"over the 4294967296-byte limit", lying_header("usr/big", 5ull << 30)},
  };
  for (const auto& [what, tar] : cases) {
    ImageScanner scanner(InspectOptions{});
    auto added = scanner.add_layer("sha256:bad", from(tar));
    ASSERT_FALSE(added) << what;
    EXPECT_TRUE(added.error().refused) << what;
    EXPECT_NE(added.error().message.find("layer sha256:bad: entry 'usr/"), std::string::npos) << added.error().message;
    EXPECT_NE(added.error().message.find(what), std::string::npos) << added.error().message;
  }
}

TEST(ImageScanner, DamagedLayerAndMissingLayerAreErrors) {
  ImageScanner scanner(InspectOptions{});
  const std::string junk(4000, 'j');
  auto added = scanner.add_layer("junk", from(junk));
  ASSERT_FALSE(added);
  EXPECT_FALSE(added.error().refused);
  EXPECT_NE(added.error().message.find("layer junk is damaged"), std::string::npos) << added.error().message;

  ImageScanner other(InspectOptions{});
  ASSERT_TRUE(other.add_layer("a", from(make_tar({{"x", "y"}}))));
  auto done = other.finish({"a", "b"});
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().message.find("names layer b, which was not read"), std::string::npos);
}

TEST(ImageScanner, AnEmptyLayerIsALayer) {
  const std::string empty(1024, '\0');  // what docker writes for a layer with no change
  ImageScanner scanner(InspectOptions{});
  ASSERT_TRUE(scanner.add_layer("empty", from(empty)));
  auto content = scanner.finish({"empty", "empty"});
  ASSERT_TRUE(content);
  EXPECT_EQ(content->layers, 2u);
  EXPECT_TRUE(content->files.empty());
}

TEST(ImageArchive, DockerSaveLayoutWithManifestLast) {
  const std::string code = fatbin_sm80();
  const std::string l1 = make_tar(
      {{"opt/lib/libk.fatbin", code},
       {"var/lib/dpkg/status", "Package: libcudnn9-cuda-12\nStatus: install ok installed\nVersion: 9.1.0.70-1\n"}});
  const std::string l2 = make_tar({{"opt/lib/.wh.libk.fatbin", ""}});
  const std::string config = R"({"config":{"Env":["CUDA_VERSION=12.4.1"]},"rootfs":{"diff_ids":[]}})";
  const std::string archive = make_tar({{"blobs/sha256/aaa", l1},
                                        {"blobs/sha256/bbb", l2},
                                        {"blobs/sha256/ccc", config},
                                        {"manifest.json", R"([{"Config":"blobs/sha256/ccc","RepoTags":["x:1"],)"
                                                          R"("Layers":["blobs/sha256/aaa","blobs/sha256/bbb"]}])"}});
  auto image = scan_image_archive(from(archive), InspectOptions{.modules = true});
  ASSERT_TRUE(image) << image.error().message;
  EXPECT_EQ(image->config, config);
  EXPECT_TRUE(image->content.files.empty());
  EXPECT_EQ(image->content.hidden, std::vector<std::string>{"/opt/lib/libk.fatbin (layer 1)"});
  EXPECT_EQ(image->content.evidence.at("/var/lib/dpkg/status").packages,
            (std::map<std::string, std::string>{{"libcudnn9-cuda-12", "9.1.0.70"}}));

  const std::string no_manifest = make_tar({{"blobs/sha256/aaa", l1}});
  auto bad = scan_image_archive(from(no_manifest), InspectOptions{});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no manifest.json"), std::string::npos);
}

// What a scan keeps of a bill-of-materials file, read as it streams.
BomEvidence read_text(const std::string& path, const std::string& text) {
  BomTexts texts;
  return texts.read(path, text.size(), from(text), "/" + path);
}

TEST(Bom, VersionsComeFromTheBestEvidenceAndSayWhere) {
  ImageContent in;
  in.paths = {"/usr/lib/x86_64-linux-gnu/libcublas.so.12",
              "/usr/lib/x86_64-linux-gnu/libcublas.so.12.4.5.8",
              "/usr/lib/x86_64-linux-gnu/libcudnn.so.9",
              "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9",
              "/usr/local/cuda-12.4/lib64/libcudart.so.12",
              "/usr/lib/python3/site-packages/nvidia_nccl_cu12-2.20.5.dist-info/METADATA",
              "/usr/lib/python3/site-packages/nvidia/nccl/lib/libnccl.so.2",
              "/usr/lib/libcufft.so.11",
              "/usr/lib/x86_64-linux-gnu/libcuda.so.1"};
  in.evidence["/var/lib/dpkg/status"] =
      read_text("var/lib/dpkg/status",
                "Package: libcudnn9-cuda-12\nStatus: install ok installed\nVersion: 9.1.0.70-1\n\n"
                "Package: libcudnn9-dev-cuda-12\nStatus: deinstall ok config-files\nVersion: 9.0.0.1-1\n");
  in.evidence["/usr/local/cuda-12.4/version.json"] =
      read_text("usr/local/cuda-12.4/version.json", R"({"cuda_cudart":{"name":"CUDA Runtime","version":"12.4.127"}})");
  in.links["/usr/lib/x86_64-linux-gnu/libcublas.so.12"] = "libcublas.so.12.4.5.8";
  const auto bom = bill_of_materials(in);
  std::map<std::string, Component> by;
  for (const auto& c : bom) by[c.key] = c;
  EXPECT_EQ(by["cublas"].version, "12.4.5.8");
  EXPECT_EQ(by["cublas"].source, "file name");
  EXPECT_EQ(by["cublas"].files, std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libcublas.so.12.4.5.8"});
  EXPECT_EQ(by["cudnn"].version, "9.1.0.70");
  EXPECT_EQ(by["cudnn"].source, "dpkg libcudnn9-cuda-12");
  EXPECT_EQ(by["cudnn"].files.size(), 2u);
  EXPECT_EQ(by["cudart"].version, "12.4.127");
  EXPECT_EQ(by["cudart"].source, "version.json");
  EXPECT_EQ(by["nccl"].version, "2.20.5");
  EXPECT_EQ(by["nccl"].source, "pip nvidia-nccl-cu12");
  EXPECT_EQ(by["cufft"].version, "11");
  EXPECT_EQ(by["cufft"].source, "soname");
  EXPECT_TRUE(by["libcuda"].warning);
  EXPECT_EQ(by.count("cusparse"), 0u);
}

TEST(Bom, TwoCopiesInTwoDirectoriesAreTwoRowsEachWithItsOwnEvidence) {
  // PyTorch's site-packages as the H200 host has it: CUDA 13's CUPTI from
  // a wheel, and Triton's own CUPTI of CUDA 12 (file name 2025.1.1).
  ImageContent in;
  in.paths = {"/sp/nvidia/cu13/lib/libcupti.so.13", "/sp/triton/lib/cupti/libcupti.so.12",
              "/sp/triton/lib/cupti/libcupti.so.2025.1.1", "/sp/nvidia_cuda_cupti-13.0.85.dist-info/RECORD"};
  const auto bom = bill_of_materials(in);
  ASSERT_EQ(bom.size(), 2u);
  EXPECT_EQ(bom[0].files, std::vector<std::string>{"/sp/nvidia/cu13/lib/libcupti.so.13"});
  EXPECT_EQ(bom[0].version, "13.0.85");
  EXPECT_EQ(bom[0].source, "pip nvidia-cuda-cupti");
  EXPECT_EQ(bom[1].version, "2025.1.1");
  EXPECT_EQ(bom[1].source, "file name");
}

TEST(Bom, SplitSoname) {
  EXPECT_EQ(split_soname("libcublasLt.so.12.4.5.8")->stem, "libcublasLt.so");
  EXPECT_EQ(split_soname("libcublasLt.so.12.4.5.8")->version, "12.4.5.8");
  EXPECT_FALSE(split_soname("libcublasLt.so"));
  EXPECT_FALSE(split_soname("libx.so.debug"));
}

TEST(BomText, WhichFilesTheScanKeeps) {
  EXPECT_TRUE(bom_text("var/lib/dpkg/status"));
  EXPECT_TRUE(bom_text("var/lib/dpkg/status.d/libcudnn9"));
  EXPECT_TRUE(bom_text("usr/local/cuda-12.4/version.json"));
  EXPECT_FALSE(bom_text("usr/local/cuda-12.4/lib/version.json"));
  EXPECT_FALSE(bom_text("etc/passwd"));
}

}  // namespace
}  // namespace orc::inspect
