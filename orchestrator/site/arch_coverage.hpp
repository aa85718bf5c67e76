#pragma once
// Whether an artifact set runs on every GPU of a tier, from what its manifest
// says each file embeds (the inspector's findings, recorded at build time and
// covered by the signature): per file with device code, per GPU, native SASS,
// or PTX the driver can JIT where the tier's ptx policy allows it (any policy
// but `none`: a tier that embeds no PTX did not mean its GPUs to JIT). Files
// without device code (headers, data) are not judged; a set with none at all
// fails, since it proves nothing about the tier.
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::site {

struct ArchCoverage {
  bool ok = false;
  std::vector<std::string> problems;  // one sentence each: file, GPU, CC, what is missing
  std::vector<std::string> jit;       // GPUs that will JIT (allowed): said as warnings
  // Recorded targets this version cannot read (a newer version's names):
  // judged as absent, said as warnings, and named in a refusal.
  std::vector<std::string> unread;
};

ArchCoverage check_arch_coverage(const cache::Manifest& manifest, const recipe::Tier& tier);

// The tier the signed manifest says the set was built for (its "built_for":
// GPUs and PTX policy), for a node without the configuration; nullopt for a
// set built before it was recorded, or a record this version cannot read
// (a CC it does not know), with the reason in `why`.
std::optional<recipe::Tier> built_for_tier(const cache::Manifest& manifest, std::string* why = nullptr);

// Whether `cc` (a GPU's own, without variant) is the CC of a GPU of `tier`.
bool tier_has_cc(const recipe::Tier& tier, const arch::ComputeCapability& cc);

// What `--require-smoke` asks of a set: for every distinct CC of `tier`, a
// run under the tier on a GPU of that CC that passed, whose record verifies
// as signed by a key in `trusted` (the node that ran it: smoke_run.hpp),
// that the node recorded as a GPU of the tier, on a driver at or above the
// tier's `driver:` when it declares one; and no such run that did not pass.
// A run on a GPU of another CC, an unsigned or untrusted run, or one on an
// older driver counts for nothing. A run whose record does not verify
// refuses the set. nullopt when it holds; else one sentence naming the CCs
// still missing (or the run that failed) and what to run
// (`orchestrate smoke TIER --artifact sha256:HEX`, then push).
std::optional<std::string> smoke_problem(const cache::Manifest& manifest, const digest::Digest& set,
                                         const recipe::Tier& tier, const cache::TrustedKeys& trusted);

}  // namespace orc::site
