// A real 540 MB library: libcublasLt.so.13 from CUDA 13.0, thousands of
// containers, zstd-compressed cubins. The counts and first lines are
// cuobjdump's (fatbin-format.md A.1; cuobjdump 12.4 gives the same counts);
// the header-based default must name every entry as the decompressing exact
// listing does, and both are timed. For the very copy cuobjdump 13.0.85 was
// run on (on the H200 host), its whole stdout is pinned by digest and by the
// count of each name's arch.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>

#include "orchestrator/digest/sha256.hpp"
#include "tests/inspect/fixtures.hpp"
#include "tests/integration/process.hpp"

namespace orc::inspect_test {
namespace {

fs::path cublaslt() {
  return integration::env_or("ORC_CUBLASLT",
                             integration::env_or("ORC_CUDA13", "/usr/local/cuda") + "/lib64/libcublasLt.so.13");
}

std::size_t count_lines(std::string_view text, std::string_view prefix) {
  std::size_t n = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    if (text.substr(at).starts_with(prefix)) ++n;
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return n;
}

// `cuobjdump -lelf -lptx libcublasLt.so.13` (13.0.85) on
// libcublasLt.so.13.1.0.3, 541595600 bytes, md5 59ee35994d4204480da76b95fb8e7636.
constexpr std::uint64_t k_recorded_size = 541595600;
constexpr std::string_view k_recorded_stdout_sha256 =
    "f2e9cbcffdada23ba8fda2ef2daf67c75d5449231af91aaa4da2da9e20c616b0";
const std::map<std::string, int> k_recorded_archs = {
    {"ELF sm_100", 1187}, {"ELF sm_100a", 1},  {"ELF sm_103", 64}, {"ELF sm_120", 1596}, {"ELF sm_121", 4},
    {"ELF sm_75", 166},   {"ELF sm_80", 482},  {"ELF sm_86", 105}, {"ELF sm_89", 247},   {"ELF sm_90", 221},
    {"ELF sm_90a", 1376}, {"PTX sm_120", 287}, {"PTX sm_75", 1}};

// "ELF sm_90a" -> count, from "ELF file   12: libcublasLt.so.12.sm_90a.cubin".
std::map<std::string, int> arch_counts(std::string_view text) {
  std::map<std::string, int> counts;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    const std::size_t ext = line.rfind('.'), sm = line.rfind(".sm_");
    if (sm != std::string_view::npos && ext > sm)
      ++counts[std::string(line.substr(0, 3)) + " " + std::string(line.substr(sm + 1, ext - sm - 1))];
    at = end + 1;
  }
  return counts;
}

Listing timed(const fs::path& path, inspect::ListOptions options, const char* label) {
  const auto start = std::chrono::steady_clock::now();
  Listing l = list(path, options);
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  std::cout << "[ timing   ] libcublasLt.so.13 " << label << ": " << took.count() << " ms\n";
  return l;
}

TEST(CublasLt, ListsEveryEntryAndHeaderNamesEqualExactNames) {
  const fs::path path = cublaslt();
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent (set ORC_CUBLASLT to another copy)";
  const inspect::ListOptions both{.elf = true, .ptx = true};
  const Listing header = timed(path, both, "-lelf -lptx, header names");
  const Listing exact = timed(path, {.elf = true, .ptx = true, .exact = true}, "-lelf -lptx, exact (decompressing)");
  timed(path, {.elf = true}, "-lelf, header names");

  EXPECT_EQ(header.exit_code, 0);
  EXPECT_EQ(header.err, "");
  EXPECT_EQ(count_lines(header.out, "ELF file "), 5449u);
  EXPECT_EQ(count_lines(header.out, "PTX file "), 288u);
  EXPECT_TRUE(
      header.out.starts_with("ELF file    1: libcublasLt.so.1.sm_75.cubin\n"
                             "ELF file    2: libcublasLt.so.2.sm_80.cubin\n"
                             "ELF file    3: libcublasLt.so.3.sm_86.cubin\n"))
      << header.out.substr(0, 200);
  EXPECT_NE(header.out.find("\nELF file 5449: "), std::string::npos);
  // Compare line by line so a mismatch names the entry, not 400 KB of text.
  ASSERT_EQ(exact.exit_code, header.exit_code);
  std::size_t line = 0, at_h = 0, at_e = 0, mismatches = 0;
  while (at_h < header.out.size() && at_e < exact.out.size()) {
    const std::size_t end_h = header.out.find('\n', at_h), end_e = exact.out.find('\n', at_e);
    const std::string_view h = std::string_view(header.out).substr(at_h, end_h - at_h);
    const std::string_view e = std::string_view(exact.out).substr(at_e, end_e - at_e);
    ++line;
    if (h != e && ++mismatches <= 10) ADD_FAILURE() << "line " << line << ": header '" << h << "', exact '" << e << "'";
    at_h = end_h + 1;
    at_e = end_e + 1;
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(header.out.size(), exact.out.size());

  // The size tells that copy apart (here it is a plain file, there a symlink).
  if (fs::file_size(path) == k_recorded_size) {
    digest::Sha256 sha;
    sha.update(exact.out);
    EXPECT_EQ(sha.digest().hex(), k_recorded_stdout_sha256) << "stdout differs from cuobjdump 13.0.85's";
    EXPECT_EQ(arch_counts(exact.out), k_recorded_archs);
  } else {
    std::cout << "[ skipped  ] digest check: " << path << " is not the copy cuobjdump 13.0 was run on\n";
  }

  // On a host with cuobjdump 13.0 (the GPU host), the real thing as well.
  const fs::path cuobjdump = fs::path(integration::env_or("ORC_CUDA13", "/usr/local/cuda")) / "bin/cuobjdump";
  if (!fs::exists(cuobjdump)) {
    std::cout << "[ skipped  ] live comparison: no " << cuobjdump << "\n";
    return;
  }
  const Listing theirs = run_cuobjdump(cuobjdump, {"-lelf", "-lptx"}, path);
  EXPECT_EQ(theirs.out == exact.out, true) << "cuobjdump 13.0 lists libcublasLt.so.13 differently";
  EXPECT_EQ(theirs.err, exact.err);
  EXPECT_EQ(theirs.exit_code, exact.exit_code);
}

}  // namespace
}  // namespace orc::inspect_test
