// inspect_toolkit_tree (host_toolkits.hpp): what a toolkit tree lacks, from
// its layout. The folders cover NVIDIA's runfile and .deb layouts (13.0 keeps
// headers under targets/x86_64-linux/include and libcu++ under its cccl/),
// Debian's (lib64 a link to usr/lib/x86_64-linux-gnu) and conda's (lib/).
#include <algorithm>
#include <array>
#include <string_view>

#include "orchestrator/site/host_toolkits.hpp"

namespace orc::site {

namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 1> k_program_dirs = {"bin"};
constexpr std::array<std::string_view, 5> k_library_dirs = {"lib64", "lib", "targets/x86_64-linux/lib",
                                                            "targets/x86_64-linux/lib64", "extras/CUPTI/lib64"};
constexpr std::array<std::string_view, 5> k_header_dirs = {"include", "include/cccl", "targets/x86_64-linux/include",
                                                           "targets/x86_64-linux/include/cccl", "extras/CUPTI/include"};

template <std::size_t N>
bool found_in(const fs::path& root, const std::array<std::string_view, N>& dirs, std::string_view file) {
  return std::ranges::any_of(dirs, [&](std::string_view dir) {
    std::error_code ec;
    return fs::exists(root / dir / file, ec);  // follows links: a dangling one is missing
  });
}

}  // namespace

compat::ToolkitInventory inspect_toolkit_tree(const fs::path& root) {
  compat::ToolkitInventory inventory;
  for (const auto& info : compat::toolkit_part_table()) {
    compat::MissingPart missing{.part = info.part, .files = {}};
    for (const auto file : info.programs)
      if (!found_in(root, k_program_dirs, file)) missing.files.push_back("bin/" + std::string(file));
    for (const auto file : info.libraries)
      if (!found_in(root, k_library_dirs, file)) missing.files.emplace_back(file);
    for (const auto file : info.headers)
      if (!found_in(root, k_header_dirs, file)) missing.files.emplace_back(file);
    if (!missing.files.empty()) inventory.missing.push_back(std::move(missing));
  }
  return inventory;
}

}  // namespace orc::site
