// `orchestrate inspect FILE...` says, under each file, the CUDA libraries it
// links that none of the files given carries, in the table and in --json;
// given together, a library and what it links need nothing of each other.
// Real inputs: CUDA 13.0's libnvblas (links cuBLAS 13) and libcufftw
// (links cuFFT 12).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "orchestrator/util/strings.hpp"
#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

using testing::run_cli;

constexpr const char* k_nvblas = "/usr/local/cuda/lib64/libnvblas.so.13";
constexpr const char* k_cufftw = "/usr/local/cuda/lib64/libcufftw.so.12";

TEST(InspectNeeds, EachFileSaysWhatItLinksThatTheFilesGivenLack) {
  if (!std::filesystem::exists(k_nvblas) || !std::filesystem::exists(k_cufftw))
    GTEST_SKIP() << "CUDA 13.0's libnvblas and libcufftw are not in /usr/local/cuda/lib64";
  const auto text = run_cli({"inspect", k_nvblas, k_cufftw});
  EXPECT_EQ(text.code, 0) << text.err;
  const auto nvblas_row = text.out.find("libnvblas.so.13");
  const auto blas = text.out.find("\n  needs cuBLAS 13 (libcublas.so.13), not among the files given\n");
  const auto cufftw_row = text.out.find("libcufftw.so.12");
  const auto fft = text.out.find("\n  needs cuFFT 12 (libcufft.so.12), not among the files given\n");
  ASSERT_NE(blas, std::string::npos) << text.out;
  ASSERT_NE(fft, std::string::npos) << text.out;
  EXPECT_LT(nvblas_row, blas) << "under its own row";
  EXPECT_LT(blas, cufftw_row);
  EXPECT_LT(cufftw_row, fft);
  for (const auto& line : util::split_any(text.out, "\n")) EXPECT_LT(line.size(), 100u) << line;

  const auto json = run_cli({"inspect", "--json", k_nvblas, k_cufftw});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["files"][0]["soname"], "libnvblas.so.13");
  EXPECT_EQ(doc["files"][0]["needs"], nlohmann::json::parse(R"([{"library": "cublas", "major": 13,
      "soname": "libcublas.so.13", "name": "cuBLAS"}])"));
  EXPECT_EQ(doc["files"][1]["needs"][0]["soname"], "libcufft.so.12");

  // cuFFT given beside cuFFTW: cuFFTW needs nothing more (cuFFT itself
  // links only system libraries).
  const auto together = run_cli({"inspect", "--json", k_cufftw, "/usr/local/cuda/lib64/libcufft.so.12"});
  ASSERT_EQ(together.code, 0) << together.err;
  EXPECT_EQ(nlohmann::json::parse(together.out)["files"][0]["needs"], nlohmann::json::array());
}

}  // namespace
}  // namespace orc::cli
