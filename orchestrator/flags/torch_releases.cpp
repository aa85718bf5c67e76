#include "orchestrator/flags/torch_releases.hpp"

#include <algorithm>
#include <array>

#include "orchestrator/flags/table_version.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::flags {

namespace {

struct Row {
  std::string_view version;
  std::string_view accepted;
  bool unconfirmed;
  std::string_view source;
};

// Each release's `supported_arches`, verbatim, read from the release's
// rendered source page (pytorch.github.io docs/<v>/_modules/torch/utils/
// cpp_extension.html for 1.13 - 2.1, pytorch/docs <v>/_modules/... for 2.2 -
// 2.7) and, for 2.11, from the installed file on the GPU host (2.11.0+cu130).
constexpr auto k_rows = std::to_array<Row>({
    {"1.13", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6", false,
     "pytorch.github.io docs/1.13 cpp_extension.html @523860ff"},
    {"2.0", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.9 9.0", false,
     "pytorch.github.io docs/2.0 cpp_extension.html @02a9d6d7"},
    {"2.1", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0", false,
     "pytorch.github.io docs/2.1 cpp_extension.html @260d71f6"},
    {"2.2", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 9.0a", false,
     "pytorch/docs 2.2 cpp_extension.html @e3880b57 (9.0a: pytorch#110587)"},
    {"2.3", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 9.0a", false,
     "pytorch/docs 2.3 cpp_extension.html @edc90689"},
    {"2.4", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 9.0a", false,
     "pytorch/docs 2.4 cpp_extension.html @2163abb3"},
    // Read from '6.2' on; the head is 2.4's and 2.6's, which agree.
    {"2.5", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 9.0a", true,
     "pytorch/docs 2.5 cpp_extension.html @bf6373d6 (from '6.2' on)"},
    {"2.6", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 9.0a 10.0", false,
     "pytorch/docs 2.6 cpp_extension.html @47c96adc"},
    {"2.7", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 9.0a 10.0 10.0a 10.1 10.1a 12.0 12.0a",
     false, "pytorch/docs 2.7 cpp_extension.html @05c929fb"},
    {"2.11",
     "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 9.0a 10.0 10.0a 11.0 11.0a 10.3 10.3a 12.0 "
     "12.0a 12.1 12.1a",
     false, "torch/utils/cpp_extension.py of 2.11.0+cu130 on the GPU host"},
});

// RELEASE.md's matrix, "Stable CUDA" and "Experimental CUDA" together: the
// cuXXX wheels each release published (a translated copy of RELEASE.md keeps
// the table verbatim; 1.13 - 2.0 agree with pytorch.github.io's
// previous-versions page). docs/sources/issue13-framework-facts.md section 1a.
constexpr std::string_view k_release_md = "pytorch/pytorch RELEASE.md, Release Compatibility Matrix";
constexpr auto k_cuda_rows = std::to_array<std::pair<std::string_view, std::string_view>>({
    {"1.13", "11.6 11.7"},
    {"2.0", "11.7 11.8"},
    {"2.1", "11.8 12.1"},
    {"2.2", "11.8 12.1"},
    {"2.3", "11.8 12.1"},
    {"2.4", "11.8 12.1 12.4"},
    {"2.5", "11.8 12.1 12.4"},
    {"2.6", "11.8 12.4 12.6"},
    {"2.7", "11.8 12.6 12.8"},
    {"2.8", "12.6 12.8 12.9"},
    {"2.9", "12.6 12.8 13.0"},
    {"2.10", "12.6 12.8 13.0"},
    {"2.11", "12.6 12.8 13.0"},
    {"2.12", "12.6 13.0 13.2"},
    {"2.13", "12.6 13.0 13.2"},
    {"2.14", "12.6 13.0 13.2"},
});

std::vector<TorchCudaBuilds> build_cuda_builds() {
  std::vector<TorchCudaBuilds> out;
  for (const auto& [version, cudas] : k_cuda_rows) {
    TorchCudaBuilds row{.version = detail::table_version("PyTorch CUDA builds", version, version),
                        .source = k_release_md};
    for (std::string_view word : util::split_words(cudas))
      row.cuda.push_back(detail::table_version("PyTorch CUDA builds", version, word));
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<TorchRelease> build() {
  std::vector<TorchRelease> out;
  for (const Row& row : k_rows) {
    TorchRelease r{.version = *util::Version::parse(row.version), .unconfirmed = row.unconfirmed, .source = row.source};
    for (std::string_view word : util::split_words(row.accepted)) {
      auto cc = arch::ComputeCapability::parse(word);
      if (!cc)
        throw util::Failure(util::ExitCode::check_failed,
                            "PyTorch table, row " + std::string(row.version) + ": " + cc.error());
      r.accepted.push_back(*cc);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::span<const TorchRelease> torch_releases() {
  static const std::vector<TorchRelease> table = build();
  return table;
}

std::span<const TorchCudaBuilds> torch_cuda_builds() {
  static const std::vector<TorchCudaBuilds> table = build_cuda_builds();
  return table;
}

const TorchRelease* find_torch_release(const util::Version& version) {
  const util::Version minor = version.truncated(2);
  for (const TorchRelease& r : torch_releases())
    if (r.version == minor) return &r;
  return nullptr;
}

std::vector<arch::ComputeCapability> torch_rejects(const TorchRelease& release,
                                                   std::span<const arch::ComputeCapability> ccs) {
  std::vector<arch::ComputeCapability> out;
  for (const auto& cc : ccs)
    if (std::ranges::find(release.accepted, cc) == release.accepted.end()) out.push_back(cc);
  return out;
}

}  // namespace orc::flags
