#pragma once
// Smoke runs signed by the node that ran them. A set's manifest is signed
// again by every node that attests it, so that signature only says who
// stored the set last; each run therefore carries its own Ed25519 signature,
// by the key of the node that ran it, over these canonical bytes (JSON, keys
// sorted, no whitespace):
//   {"cc": str, "driver": str, "gpu": str, "key_id": str, "member": bool,
//    "node": str, "ordinal": N, "outcome": str, "subject": "sha256:<hex>",
//    "tier": str, "time": str, "type": "orchestrate.smoke-run.v1"}
// `subject` is smoke_subject() of the set: the build itself, the same in
// every re-attested copy of it. So a second node adding its run re-signs
// the manifest but cannot alter the first node's run, move it onto another
// set or tier, or make one up in its name: only dropping it is in its power,
// and a dropped run only makes --require-smoke refuse. `type` keeps these
// bytes from ever being mistaken for a manifest the same key signed.
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/signing.hpp"

namespace orc::cache {

// The SHA-256 of the manifest's canonical bytes with its smoke object empty,
// its created time blank and its files' modes left out: what an attestation
// adds or restamps, and what a set stored again adds to a manifest written
// before modes were signed (the modes the index kept), so runs signed before
// still speak for it. The manifest's own signature covers the modes.
digest::Digest smoke_subject(const Manifest& manifest);

// The bytes the node signs for `run` under `tier` of the set `subject` names.
std::string smoke_run_bytes(const SmokeAttestation& run, std::string_view tier, const digest::Digest& subject);

// Sets run.key_id to `key`'s and run.signature to its signature of the run.
void sign_smoke_run(SmokeAttestation& run, const SigningKey& key, std::string_view tier, const digest::Digest& subject);

enum class RunSignature {
  verified,
  not_signed,     // a run of before runs were signed: it vouches for nothing
  unknown_key,    // signed by a key this machine does not trust
  bad_signature,  // the record is not what its node signed (or not for this set and tier)
};

RunSignature verify_smoke_run(const SmokeAttestation& run, std::string_view tier, const digest::Digest& subject,
                              const TrustedKeys& trusted);

// Puts `run` in place of the earlier run of the same node (hostname and key)
// on the same GPU ordinal, or adds it; every other run is kept as it was.
// Unsigned runs stay first, in their order; signed ones are kept sorted by
// node, key and ordinal, so the same runs give the same bytes.
void record_smoke_run(std::vector<SmokeAttestation>& runs, SmokeAttestation run);

}  // namespace orc::cache
