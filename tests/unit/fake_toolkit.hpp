#pragma once
// A fake toolkit tree's files beyond bin/nvcc: what every build needs of a
// toolkit (issue 27: the shared and static runtime, libcu++, the runtime
// header), so discovery and the plan take it as complete. Unit tests whose
// fake nvcc only prints a version write these next to it.
#include <filesystem>
#include <fstream>

namespace orc::unit {

inline void fake_toolkit_parts(const std::filesystem::path& root) {
  for (const char* file :
       {"include/cuda_runtime.h", "include/cuda/std/type_traits", "lib64/libcudart.so", "lib64/libcudart_static.a"}) {
    std::filesystem::create_directories((root / file).parent_path());
    std::ofstream(root / file) << "x";
  }
}

}  // namespace orc::unit
