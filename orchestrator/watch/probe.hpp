#pragma once
// What a toolkit image's own nvcc says (issue 14: the knowledge base learns
// from what it finds). Before the watcher builds in an image it runs
// `nvcc --version` and `nvcc --list-gpu-code` inside it; the answer, kept
// with the image's registry digest, is what decisions and plans use for
// that image: a tag whose nvcc is another release is refused, an arch its
// nvcc does not list is never claimed, and a release the tables do not know
// yet becomes usable the day its image appears.
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/compat/toolkits.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::watch {

struct Probe {
  std::string image;                          // the reference probed
  std::string digest;                         // its registry manifest digest ("sha256:...")
  util::Version nvcc;                         // 13.0.88 ("release 13.0, V13.0.88")
  std::vector<arch::ComputeCapability> sass;  // `nvcc --list-gpu-code`, ascending, no duplicates
  std::string probed_at;                      // RFC 3339 UTC
};

// `nvcc --list-gpu-code`: one sm_XX per line ("sm_75\nsm_80\n..."); any
// other line is an error that quotes it.
std::expected<std::vector<arch::ComputeCapability>, std::string> parse_gpu_code_list(std::string_view output);

// Where the table's row and the probe disagree, in words: "the tables say
// CUDA 13.0 compiles for sm_72; its nvcc does not list it", "... lists
// sm_88, which the tables' row lacks". Variants (90a, 100f) are left out:
// --list-gpu-code lists base targets only. Empty when they agree.
std::vector<std::string> table_differences(const compat::Toolkit& row, const Probe& probe);

// The probes file (JSON, schema 1, one entry per digest): an unknown schema
// or a damaged file reads as empty (probes are made again), never as an
// error.
std::vector<Probe> read_probes(const std::filesystem::path& file);
// Adds or replaces the entry of probe.digest, atomically.
std::expected<void, std::string> record_probe(const std::filesystem::path& file, const Probe& probe);
const Probe* find_probe(const std::vector<Probe>& probes, std::string_view digest);

}  // namespace orc::watch
