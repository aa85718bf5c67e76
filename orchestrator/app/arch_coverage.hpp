#pragma once
// Whether an artifact set runs on every GPU of a tier, from what its manifest
// says each file embeds (the inspector's findings, recorded at build time and
// covered by the signature): per file with device code, per GPU, native SASS,
// or PTX the driver can JIT where the tier's ptx policy allows it (any policy
// but `none`: a tier that embeds no PTX did not mean its GPUs to JIT). Files
// without device code (headers, data) are not judged; a set with none at all
// fails, since it proves nothing about the tier.
#include <string>
#include <vector>

#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::app {

struct ArchCoverage {
  bool ok = false;
  std::vector<std::string> problems;  // one sentence each: file, GPU, CC, what is missing
  std::vector<std::string> jit;       // GPUs that will JIT (allowed): said as warnings
};

ArchCoverage check_arch_coverage(const cache::Manifest& manifest, const recipe::Tier& tier);

// What `--require-smoke` asks of a set: its signed manifest attests a smoke
// run on at least one GPU of `tier` and every outcome recorded there is
// "pass". Empty when it does; else one sentence naming the tier and what to
// run (`orchestrate smoke TIER --artifact sha256:HEX` on a node of the tier,
// then push the attested set it stores).
std::string smoke_problem(const cache::Manifest& manifest, const std::string& manifest_hex, const std::string& tier);

}  // namespace orc::app
