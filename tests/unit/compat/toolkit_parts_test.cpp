// The part table a recipe's `needs:`, toolkit discovery and the resolver
// share, and the resolver passing over an installed toolkit that lacks one.
#include "orchestrator/compat/toolkit_parts.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <variant>

#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/compat/resolver.hpp"

namespace orc::compat {
namespace {

using P = ToolkitPart;

TEST(ToolkitParts, EveryBuildNeedsNvccTheRuntimeBothWaysAndLibcudacxx) {
  EXPECT_EQ(parts_needed({}), (std::vector<P>{P::nvcc, P::cudart, P::cudart_static, P::libcudacxx}));
  const std::vector<P> declared = {P::nccl, P::cublas};
  EXPECT_EQ(parts_needed(declared),
            (std::vector<P>{P::nvcc, P::cudart, P::cudart_static, P::libcudacxx, P::nccl, P::cublas, P::cublasLt}))
      << "libcublas.so loads libcublasLt.so: needing one needs both";
}

TEST(ToolkitParts, NamesAreTheTablesAndOnlyLibrariesAreDeclarable) {
  ASSERT_NE(find_part("cublas"), nullptr);
  EXPECT_EQ(find_part("cublas")->part, P::cublas);
  EXPECT_EQ(find_part("cublasLt")->part, P::cublasLt);
  EXPECT_EQ(find_part("cublaslt")->part, P::cublasLt);
  EXPECT_EQ(find_part("cuBLAS"), nullptr);
  EXPECT_TRUE(find_part("cudart")->always);
  const auto names = declarable_part_names();
  EXPECT_EQ(std::ranges::count(names, "cudart"), 0);
  EXPECT_EQ(std::ranges::count(names, "nccl"), 1);
  for (const auto& row : toolkit_part_table()) EXPECT_EQ(&part_info(row.part), &row);
}

TEST(ToolkitParts, AnInventorySaysWhatItLacksOfWhatIsNeeded) {
  ToolkitInventory inventory;
  inventory.missing = {{.part = P::cudart, .files = {"libcudart.so"}},
                       {.part = P::cufft, .files = {"libcufft.so", "cufft.h"}}};
  EXPECT_FALSE(inventory.complete());
  EXPECT_TRUE(inventory.lacks(P::cufft));
  EXPECT_FALSE(inventory.lacks(P::cublas));
  const std::vector<P> needed = {P::cufft, P::cublas, P::cudart};
  EXPECT_EQ(describe_missing(inventory.lacking(needed)),
            "cuFFT (libcufft.so, cufft.h), the shared CUDA runtime (libcudart.so)");
  EXPECT_TRUE(ToolkitInventory{}.complete());
}

ResolveRequest a100_tier() {
  ResolveRequest request;
  request.gpus = {{"A100", arch::ComputeCapability(8, 0)}};
  request.candidates = {util::Version(11, 8), util::Version(12, 4)};
  return request;
}

TEST(ToolkitParts, TheResolverPassesOverAToolkitThatLacksAPart) {
  ResolveRequest request = a100_tier();
  request.shortfalls = {{.toolkit = util::Version(12, 4), .reason = "installed at /t/cuda-12.4 without cuFFT"}};
  const auto outcome = resolve(request);
  const auto* r = std::get_if<Resolution>(&outcome);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->toolkit->version, util::Version(11, 8));
  EXPECT_NE(std::ranges::find(r->reasons, "CUDA 12.4 skipped: installed at /t/cuda-12.4 without cuFFT"),
            r->reasons.end());
}

TEST(ToolkitParts, WhenEveryCandidateLacksAPartTheReasonsNameEach) {
  ResolveRequest request = a100_tier();
  request.shortfalls = {
      {.toolkit = util::Version(std::vector<int>{12, 4, 131}), .reason = "installed at /t/cuda-12.4 without NCCL"},
      {.toolkit = util::Version(11, 8), .reason = "installed at /t/cuda-11.8 without NCCL"}};
  const auto outcome = resolve(request);
  const auto* u = std::get_if<Unsatisfiable>(&outcome);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->reasons, (std::vector<std::string>{"CUDA 12.4: installed at /t/cuda-12.4 without NCCL",
                                                  "CUDA 11.8: installed at /t/cuda-11.8 without NCCL"}));
}

const Toolkit& toolkit(int major, int minor) { return *find_toolkit(util::Version(major, minor)); }

TEST(ToolkitParts, AnOfflineImageLackingANeededLibraryIsPassedOverForTheOfficialTag) {
  const std::vector<P> nccl = parts_needed(std::vector<P>{P::nccl});
  const auto plain = choose_image(toolkit(12, 4), nullptr, ImagePreference::offline_first, std::nullopt);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->reference, "orchestrate/cuda:12.4-trixie");
  const auto with_nccl = choose_image(toolkit(12, 4), nullptr, ImagePreference::offline_first, std::nullopt, nccl);
  ASSERT_TRUE(with_nccl);
  EXPECT_EQ(with_nccl->source, ImageSource::official) << "nvidia/cuda's devel tags install libnccl-dev";
  EXPECT_EQ(images_lacking(toolkit(12, 4), std::nullopt, nccl),
            std::vector<std::string>{"orchestrate/cuda:12.4-trixie lacks NCCL (libnccl.so, nccl.h)"});
  const std::vector<P> jit = parts_needed(std::vector<P>{P::nvjitlink});
  EXPECT_TRUE(images_lacking(toolkit(12, 4), std::nullopt, jit).empty());
  EXPECT_EQ(images_lacking(toolkit(11, 8), std::nullopt, jit),
            std::vector<std::string>{"orchestrate/cuda:11.8-bookworm lacks nvJitLink (libnvJitLink.so, nvJitLink.h)"});
}

TEST(ToolkitParts, TheHostMountImageHasWhatTheHostsTreeHas) {
  HostCuda host{.toolkit = util::Version(13, 0), .root = "/usr/local/cuda"};
  host.inventory.missing = {{.part = P::npp, .files = {"libnppc.so", "npp.h"}}};
  const auto plain = choose_image(toolkit(13, 0), nullptr, ImagePreference::offline_first, host);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->source, ImageSource::host_mount);
  const std::vector<P> npp = parts_needed(std::vector<P>{P::npp});
  const auto with_npp = choose_image(toolkit(13, 0), nullptr, ImagePreference::offline_first, host, npp);
  ASSERT_TRUE(with_npp);
  EXPECT_EQ(with_npp->source, ImageSource::official);
  EXPECT_EQ(images_lacking(toolkit(13, 0), host, npp),
            std::vector<std::string>{"orchestrate/cuda:host-bookworm lacks NPP (libnppc.so, npp.h) (the host's "
                                     "toolkit at /usr/local/cuda)"});
}

}  // namespace
}  // namespace orc::compat
