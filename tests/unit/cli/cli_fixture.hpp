#pragma once
// What the command-line tests share: a scratch directory per test, a
// configuration, scoped environment variables, a fake host toolkit and
// fatbin containers made byte by byte.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/fake_toolkit.hpp"

namespace orc::cli::testing {

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short, as a user's paths are: inspect's table lays out at 100 columns
    // (a path too long for them turns it into a block per file).
    std::string pattern = (std::filesystem::temp_directory_path() / "orc-cli-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    m_dir = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = m_dir / name;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path m_dir;
};

inline constexpr const char* k_config = R"(tiers:
  tier-new:
    gpus: ["A100", "RTX 3090", "GeForce RTX 4090", "NVIDIA H100 80GB HBM3"]
  tier-mixed:
    gpus: ["Tesla K80", "B200"]
toolkits: ["11.8", "12.4", "12.5", "12.8", "13.0"]
recipes:
  - name: ext
    framework: pytorch
    source: {path: src}
    tiers: [tier-new]
  - name: tf
    framework: tensorflow
    source: {git: "https://example.invalid/tf.git", ref: v2.18.0}
    requires: {tensorflow: ">=2.18"}
    tiers: [tier-new]
  - name: mixed
    framework: cmake
    source: {path: src}
    tiers: [tier-mixed]
)";

// Sets an environment variable for one test, and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (m_old)
      ::setenv(m_name, m_old->c_str(), 1);
    else
      ::unsetenv(m_name);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

// A host toolkit for the host-mount image: DIR/bin/nvcc printing what
// nvcc `version` says (and the parts every build needs), pointed at by ORCHESTRATE_HOST_CUDA, so a plan's
// image does not depend on this machine's /usr/local/cuda.
inline ScopedEnv fake_host_cuda(const std::filesystem::path& dir, const std::string& version) {
  std::filesystem::create_directories(dir / "bin");
  std::ofstream(dir / "bin" / "nvcc") << "#!/bin/sh\necho 'Cuda compilation tools, release " << version << ", V"
                                      << version << ".88'\n";
  std::filesystem::permissions(dir / "bin" / "nvcc", std::filesystem::perms::owner_all);
  orc::unit::fake_toolkit_parts(dir);
  return ScopedEnv("ORCHESTRATE_HOST_CUDA", dir.string());
}
// A fatbin container, byte by byte (fatbin-format.md 2.1/2.2): one 64-byte
// entry header per (kind, arch, flags), each followed by 8 zero bytes of payload.
struct FatEntry {
  std::uint16_t kind;   // 1 PTX, 2 ELF
  std::uint32_t arch;   // 80, 90, 100
  std::uint64_t flags;  // 0x11; | 0x100000 'a', | 0x200000 'f'
};

inline std::string fatbin(const std::vector<FatEntry>& entries) {
  const auto le = [](std::string& out, std::uint64_t v, int width) {
    for (int i = 0; i < width; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  std::string body;
  for (const auto& e : entries) {
    le(body, e.kind, 2), le(body, 0x0101, 2), le(body, 64, 4), le(body, 8, 8);  // kind, version, header, payload
    le(body, 0, 4), le(body, 0, 4), le(body, 0, 2), le(body, 1, 2), le(body, e.arch, 4);
    le(body, 0, 4), le(body, 0, 4), le(body, e.flags, 8), le(body, 0, 8), le(body, 0, 8);
    body += std::string(8, '\0');
  }
  std::string out;
  le(out, 0xBA55ED50u, 4), le(out, 1, 2), le(out, 16, 2), le(out, body.size(), 8);
  return out + body;
}

}  // namespace orc::cli::testing
