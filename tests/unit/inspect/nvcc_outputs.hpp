#pragma once
// Real nvcc 13.0 outputs for the inspect reader tests: the real tool is the
// oracle (STYLE.md). Each output is built on first use into a temporary
// directory, so a test run (or one ctest process per test) builds only what
// it reads. Without /usr/local/cuda/bin/nvcc 13.x the tests that need it
// skip with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include "orchestrator/util/process.hpp"

namespace orc::inspect::testing {

inline constexpr const char* k_nvcc = "/usr/local/cuda/bin/nvcc";

class NvccOutputs {
 public:
  static NvccOutputs& instance() {
    static NvccOutputs outputs;
    return outputs;
  }

  // Empty when nvcc 13 is usable; otherwise why not.
  const std::string& missing() const { return m_missing; }

  // The path of a named output (see recipes()), built on first use. A build
  // failure fails the test and returns an empty path.
  std::filesystem::path get(const std::string& name) {
    const auto path = m_dir / name;
    if (std::filesystem::exists(path)) return path;
    const auto recipe = recipes().find(name);
    if (recipe == recipes().end()) {
      ADD_FAILURE() << "no nvcc recipe for " << name;
      return {};
    }
    const auto log = m_dir / (name + ".log");
    const std::string command = "cd '" + m_dir.string() + "' && PATH=/usr/local/cuda/bin:$PATH && (" + recipe->second +
                                ") >'" + log.string() + "' 2>&1";
    const auto ran = util::run_process({.argv = {"sh", "-c", command}});
    if (!ran || !ran->ok() || !std::filesystem::exists(path)) {
      std::ifstream in(log);
      ADD_FAILURE() << "building " << name << " failed: " << recipe->second << "\n"
                    << std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      return {};
    }
    return path;
  }

  NvccOutputs(const NvccOutputs&) = delete;
  NvccOutputs& operator=(const NvccOutputs&) = delete;

 private:
  NvccOutputs() {
    if (!std::filesystem::exists(k_nvcc)) {
      m_missing = std::string(k_nvcc) + " not found (CUDA 13.0 not installed)";
      return;
    }
    m_dir = std::filesystem::temp_directory_path() / ("orc-inspect-nvcc-" + std::to_string(::getpid()));
    std::filesystem::create_directories(m_dir);
    const auto version = util::run_process({.argv = {std::string(k_nvcc), "--version"}, .merge_stderr = true});
    const std::string text = version ? version->out : version.error().message;
    if (text.find("release 13.") == std::string::npos) {
      m_missing = std::string(k_nvcc) + " is not CUDA 13 (the expectations are cuobjdump 13.0's)";
      return;
    }
    std::ofstream(m_dir / "k.cu") << "__global__ void add(float* a) { a[threadIdx.x] += 1; }\n";
    std::ofstream(m_dir / "k2.cu") << "__global__ void mul(float* a) { a[threadIdx.x] *= 2; }\n";
    std::ofstream(m_dir / "m.cu") << "__global__ void add(float* a);\n"
                                     "int main() { add<<<1, 32>>>(nullptr); return 0; }\n";
    std::ofstream(m_dir / "d.cu") << "__device__ float twice(float x) { return 2 * x; }\n";
  }
  ~NvccOutputs() {
    std::error_code ec;
    if (!m_dir.empty()) std::filesystem::remove_all(m_dir, ec);
  }

  // Output name -> shell command run in the directory (fatbin-format.md
  // Appendix A names the same builds).
  static const std::map<std::string, std::string>& recipes() {
    static const std::map<std::string, std::string> table = {
        {"multi.fatbin",
         "nvcc -fatbin -gencode arch=compute_75,code=sm_75 -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]' "
         "-gencode 'arch=compute_100f,code=[sm_100f,compute_100f]' -gencode "
         "'arch=compute_120,code=[sm_120,compute_120]' "
         "-o multi.fatbin k.cu"},
        {"c90a.cubin", "nvcc -cubin -arch=sm_90a -o c90a.cubin k.cu"},
        {"c90.cubin", "nvcc -cubin -arch=sm_90 -o c90.cubin k.cu"},
        {"c100f.cubin", "nvcc -cubin -arch=sm_100f -o c100f.cubin k.cu"},
        {"plain.fatbin", "nvcc -fatbin -arch=sm_80 -o plain.fatbin k.cu"},
        {"nocompress.fatbin", "nvcc -fatbin -arch=sm_80 --compress-mode=none -o nocompress.fatbin k.cu"},
        {"all.fatbin", "nvcc -fatbin -arch=sm_80 -Xfatbin=-compress-all -o all.fatbin k.cu"},
        {"speed.fatbin", "nvcc -fatbin -arch=sm_80 --compress-mode=speed -o speed.fatbin k.cu"},
        {"speed-all.fatbin",
         "nvcc -fatbin -arch=sm_80 --compress-mode=speed -Xfatbin=-compress-all -o speed-all.fatbin k.cu"},
        {"debug.fatbin", "nvcc -G -fatbin -arch=sm_80 -o debug.fatbin k.cu"},
        {"k.o", "nvcc -c -arch=sm_80 -o k.o k.cu"},
        {"kr.o", "nvcc -rdc=true -c -arch=sm_80 -o kr.o k.cu"},
        {"kd.o", "nvcc -dlto -c -arch=sm_80 -o kd.o k.cu"},
        // Relocatable code for sm_75, sm_80 and sm_90, device-linked for sm_75
        // only: the runtime loads just the sm_75 module.
        {"rdc75.so",
         "nvcc -Xcompiler -fPIC -rdc=true -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 "
         "-gencode arch=compute_90,code=sm_90 -c -o kr3.o k.cu && "
         "nvcc -shared -rdc=true -gencode arch=compute_75,code=sm_75 -o rdc75.so kr3.o"},
        // -rdc with the same SASS and PTX targets for the compile and the
        // device link (what CMake's CUDA_SEPARABLE_COMPILATION does): the
        // device link makes the sm_90 cubin and no PTX, so compute_90 sits in
        // __nv_relfatbin only.
        {"rdc-ptx90", "nvcc -rdc=true -gencode arch=compute_90,code=[sm_90,compute_90] -o rdc-ptx90 m.cu k.cu"},
        // nvcc 13's default for an executable: sm_75 SASS and compute_75 PTX.
        {"t75", "nvcc -gencode arch=compute_75,code=[sm_75,compute_75] -o t75 m.cu k.cu"},
        {"dev.cubin", "nvcc -cubin -rdc=true -arch=sm_90 -o dev.cubin d.cu"},
        {"libk.a",
         "nvcc -c -arch=sm_80 -o tmpxft_00000253_00000000-13_k.o k.cu && "
         "nvcc -c -arch=sm_80 -o tmpxft_00000253_00000000-16_k2.o k2.cu && "
         "ar rcs libk.a tmpxft_00000253_00000000-13_k.o tmpxft_00000253_00000000-16_k2.o"},
    };
    return table;
  }

  std::filesystem::path m_dir;
  std::string m_missing;
};

// The path of a real nvcc output, skipping the test when nvcc 13 is absent.
#define ORC_NVCC_OUTPUT(var, name)                                                 \
  auto& orc_nvcc_##var = ::orc::inspect::testing::NvccOutputs::instance();         \
  if (!orc_nvcc_##var.missing().empty()) GTEST_SKIP() << orc_nvcc_##var.missing(); \
  const std::filesystem::path var = orc_nvcc_##var.get(name);                      \
  if (var.empty()) return

}  // namespace orc::inspect::testing
