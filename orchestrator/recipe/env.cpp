// `env:` on a tier or a recipe: variables every build step gets, on top of
// the build's fixed environment; part of the cache key.
#include <algorithm>
#include <array>

#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::recipe::detail {

namespace {

// Variables the build sets from the plan or the toolkit: a recipe that set
// them would build something other than what the plan and its key say.
constexpr std::array<std::string_view, 15> k_build_owned = {"CUDA_HOME",
                                                            "CUDACXX",
                                                            "TORCH_CUDA_ARCH_LIST",
                                                            "TF_CUDA_COMPUTE_CAPABILITIES",
                                                            "CUDAARCHS",
                                                            "TF_CUDA_VERSION",
                                                            "HERMETIC_CUDA_COMPUTE_CAPABILITIES",
                                                            "TF_CUDNN_VERSION",
                                                            "HERMETIC_CUDA_VERSION",
                                                            "HERMETIC_CUDNN_VERSION",
                                                            "CMAKE_CUDA_ARCHITECTURES",
                                                            "MAX_JOBS",
                                                            "CMAKE_BUILD_PARALLEL_LEVEL",
                                                            "PYTORCH_NVCC",
                                                            "CUDA_ARCH"};

bool valid_name(std::string_view name) {
  const auto first = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (name.empty() || !first(name.front())) return false;
  return std::ranges::all_of(name, [&](char c) { return first(c) || (c >= '0' && c <= '9'); });
}

}  // namespace

std::vector<EnvSetting> parse_env(Reader& reader, const YAML::Node& node) {
  std::vector<EnvSetting> out;
  if (!reader.expect_mapping(node, "for 'env' (NAME: value)")) return out;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const auto name = reader.string(it->first, "as a variable name");
    if (!name) continue;
    if (!valid_name(*name)) {
      reader.error(it->first,
                   "invalid variable name '" + *name + "': letters, digits and '_', not starting with a digit");
      continue;
    }
    if (std::ranges::find(k_build_owned, *name) != k_build_owned.end()) {
      reader.error(it->first, "'" + *name +
                                  "' is set by the build from the plan or the toolkit; a recipe cannot change it "
                                  "(choose archs with tiers, the toolkit with requires: cuda)");
      continue;
    }
    if (name->starts_with("ORCHESTRATE_")) {
      reader.error(it->first, "'" + *name + "' configures orchestrate itself, not a build step");
      continue;
    }
    if (std::ranges::any_of(out, [&](const EnvSetting& e) { return e.name == *name; })) {
      reader.error(it->first, "duplicate variable '" + *name + "'");
      continue;
    }
    auto value = reader.string(it->second, "for '" + *name + "'");
    if (!value) continue;
    if (value->find('\0') != std::string::npos) {
      reader.error(it->second, "a variable's value cannot hold a NUL byte");
      continue;
    }
    out.push_back({.name = std::move(*name), .value = std::move(*value), .where = reader.where(it->first)});
  }
  return out;
}

std::optional<NvccPolicy> parse_nvcc_policy(Reader& reader, const YAML::Node& node) {
  const auto text = reader.string(node, "for 'nvcc'");
  if (!text) return std::nullopt;
  if (*text == "verify") return NvccPolicy::verify;
  if (*text == "enforce") return NvccPolicy::enforce;
  reader.error(node, "'nvcc' is verify or enforce, not '" + *text + "'",
               util::did_you_mean(*text, std::array<std::string_view, 2>{"verify", "enforce"}));
  return std::nullopt;
}

}  // namespace orc::recipe::detail
