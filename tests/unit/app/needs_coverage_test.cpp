// An image (here an unpacked root file system) whose program links cuBLAS
// and the shared CUDA runtime but holds only the runtime: coverage says
// which library the image lacks and who links it, in text, JSON, HTML and
// Markdown; a link to the host's cuBLAS does not count; the same image with
// cuBLAS in it lacks nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "orchestrator/app/inspect/coverage.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_cuda = "/usr/local/cuda";

TEST(NeedsCoverage, AnImageThatLacksALibraryItsProgramLinksSaysWhichAndWho) {
  const std::string nvcc = std::string(k_cuda) + "/bin/nvcc";
  if (::access(nvcc.c_str(), X_OK) != 0) GTEST_SKIP() << "no CUDA 13.0 toolkit at " << k_cuda;
  const fs::path root = fs::temp_directory_path() / ("orc-needs-cover-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "app");
  fs::create_directories(root / "usr/lib/x86_64-linux-gnu");
  std::ofstream(root / "gemm.cu")
      << "#include <cublas_v2.h>\n__global__ void k(float* a) { a[threadIdx.x] = 1; }\n"
      << "int main() { cublasHandle_t h; k<<<1, 1>>>(nullptr); return cublasCreate(&h); }\n";
  const auto built = util::run_process({.argv = {nvcc, "-arch=sm_90", "-cudart", "shared", "-o",
                                                 (root / "app/gemm").string(), (root / "gemm.cu").string(), "-lcublas"},
                                        .merge_stderr = true});
  ASSERT_TRUE(built && built->ok()) << (built ? built->out : built.error().message);
  fs::remove(root / "gemm.cu");
  // The runtime as NVIDIA's images have it: the soname a link to the file.
  const fs::path lib = root / "usr/lib/x86_64-linux-gnu";
  fs::copy_file(fs::path(k_cuda) / "lib64/libcudart.so.13", lib / "libcudart.so.13.0.96");
  fs::create_symlink("libcudart.so.13.0.96", lib / "libcudart.so.13");

  const InspectRequest request{.ccs = {"9.0"}, .config = root / "none.yaml"};
  const ImageSource source{.kind = ImageSourceKind::directory, .given = root.string(), .directory = root};
  const ImageReport report = cover_image(request, source);
  ASSERT_EQ(report.missing.size(), 1u);
  EXPECT_EQ(report.missing[0].library.soname, "libcublas.so.13");
  EXPECT_EQ(report.missing[0].files, std::vector<std::string>{"/app/gemm"});

  const std::string text = cli::coverage_text(report, false);
  EXPECT_NE(text.find("\nCUDA libraries its files link that the image lacks:\n"
                      "  cuBLAS 13 (libcublas.so.13): linked by /app/gemm\n"),
            std::string::npos)
      << text;
  for (const auto& line : util::split_any(text, "\n"))
    if (line.find("linked by") != std::string::npos) EXPECT_LT(line.size(), 100u) << line;
  const auto json = nlohmann::json::parse(cli::coverage_json(report));
  EXPECT_EQ(json["missing"], (nlohmann::json::parse(R"([{"library": "cublas", "name": "cuBLAS", "major": 13,
      "soname": "libcublas.so.13", "files": ["/app/gemm"]}])")));
  EXPECT_NE(cli::coverage_html(report).find("<li>cuBLAS 13 (libcublas.so.13): linked by /app/gemm</li>"),
            std::string::npos);
  EXPECT_NE(cli::coverage_markdown(report).find("- cuBLAS 13 (libcublas.so.13): linked by /app/gemm\n"),
            std::string::npos);

  // A link to the host's cuBLAS leads out of the image: it still lacks it.
  fs::create_symlink(fs::path(k_cuda) / "lib64/libcublas.so.13", lib / "libcublas.so.13");
  const ImageReport outside = cover_image(request, source);
  ASSERT_EQ(outside.missing.size(), 1u);
  EXPECT_EQ(outside.missing[0].library.soname, "libcublas.so.13");

  // cuBLAS in the image, as a link to a file of it (a scan reads no link,
  // but a link is a name the loader finds): nothing lacks.
  fs::remove(lib / "libcublas.so.13");
  std::ofstream(lib / "libcublas.so.13.1.0.3") << "the library's bytes";
  fs::create_symlink("libcublas.so.13.1.0.3", lib / "libcublas.so.13");
  const ImageReport complete = cover_image(request, source);
  EXPECT_TRUE(complete.missing.empty()) << complete.missing[0].library.soname;
  EXPECT_EQ(cli::coverage_text(complete, false).find("lacks"), std::string::npos);
  fs::remove_all(root);
}

}  // namespace
}  // namespace orc::app
