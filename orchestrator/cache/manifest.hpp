#pragma once
// The manifest, schema 2: what was asked, what was built, what it holds and
// where it ran. Stored as a blob of its canonical bytes, so the manifest
// digest, the index's identity of an artifact set and the digest a signature
// covers are one and the same.
//
// Canonical form: JSON with keys sorted, no insignificant whitespace, files
// sorted by path, UTF-8 (invalid sequences replaced). Shape:
//   {"build_log": "sha256:<hex>" | null, "created": "<RFC 3339 UTC>",
//    "cudnn": str | null, "engine": str,
//    "files": [{"embedded": {"ptx": [..], "sass": [..]}, "path": str,
//               "requested": {"ptx": [..], "sass": [..]}, "sha256": "<hex>", "size": N,
//               "mode": "0755",                     (permission bits, 4 octal digits, 0777 at most)
//               "chunks": {"sha256": ["<hex>", ..], "size": N},   (chunks only on a
//                                          file larger than one chunk: chunks.hpp)
//               "needs": [{"library": str, "major": N | null, "soname": str}]}],
//                                          (needs only on a file that has some; sorted
//                                          by soname, each once)
//    "framework": str, "host_compiler": str | null,
//    "image": {"digest": str | null, "reference": str}, "key": str, "recipe": str,
//    "schema_version": 2,
//    "smoke": {"<tier>": [{"cc": str, "driver": str, "gpu": str, "outcome": str, "time": str,
//                          "key_id": "<16 hex>", "member": bool, "node": str, "ordinal": N,
//                          "signature": "<base64 of 64 bytes>"}]},   (the last five
//                                          all or none: smoke_run.hpp)
//    "source": {"kind": str, "revision": str}, "tier": str, "toolkit": str, "warnings": [str],
//    "trigger": {"reason": str, "from": {"set": "sha256:<hex>" | null, "toolkit": str,
//                "image": str, "image_digest": str | null},
//                "to": {"toolkit": str, "image": str, "image_digest": str | null}}}
//                                          (trigger only on a set the watcher rebuilt)
// "mode" came after them the same way: a file's mode is signed with its bytes,
// so a layer swapped under a valid signature cannot make a file writable by
// group or others, or setuid. A manifest without modes (written before) still
// parses and verifies with the bytes it had; its files land 0755 when their
// packed mode lets the owner execute them, else 0644 (landing_mode).
// "needs" came the same way as "mode" and "chunks" below, for their reasons:
// the CUDA libraries a file links (DT_NEEDED) that no file of the set
// carries, each with the soname major a node must provide (inspect/needs.hpp
// says how); "library" is the key of inspect's table ("cublas"). A manifest
// without it reads as a set that needs nothing it could name.
// "chunks" came after the first schema 2 manifests without a version bump:
// a manifest without it has the bytes it always had, and this project had
// no release whose strict parser would refuse one with it. The five signed
// keys of a smoke run came the same way, for the same reasons: a run without
// them parses as it always did (it is kept, and vouches for nothing), the
// bytes of every manifest without a smoke run are unchanged, and a version
// bump would have made every manifest this version writes a miss for the
// versions before it, builds included, where these keys only reach the
// manifests `smoke --artifact` writes.
#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/arch_list.hpp"
#include "orchestrator/cache/chunks.hpp"
#include "orchestrator/digest/digest.hpp"

namespace orc::cache {

// One GPU's smoke-test run of the artifact. A run names the node that ran it
// (hostname and signing key), the GPU's ordinal there and whether its CC is
// one of the tier's, and carries that node's signature over the run
// (smoke_run.hpp), so a run speaks for one GPU of one node and no other node
// can forge or alter it. A run recorded before runs were signed has none of
// these: it stays readable and counts for nothing.
struct SmokeAttestation {
  std::string gpu;            // product name
  std::string cc;             // "9.0"
  std::string driver;         // "550.54.15"
  std::string outcome;        // "pass" | "fail" | ...
  std::string time;           // RFC 3339 UTC
  std::string node;           // hostname of the node that ran it
  std::string key_id;         // that node's signing key: 16 hex
  std::uint32_t ordinal = 0;  // the GPU's ordinal on that node
  bool member = false;        // the GPU's CC is the CC of a GPU of the tier
  std::string signature;      // 64 raw bytes (base64 in the manifest); empty: an unsigned, older run
  bool is_signed() const { return !signature.empty(); }
  bool operator==(const SmokeAttestation&) const = default;
};

// A CUDA library a file links and its set does not carry: the node (or the
// image around the set) must provide it.
struct LibraryNeed {
  std::string library;       // inspect's key: "cublas"
  std::optional<int> major;  // 13; none for an unversioned name
  std::string soname;        // "libcublas.so.13"
  bool operator==(const LibraryNeed&) const = default;
};

struct ManifestFile {
  std::string path;  // relative to the artifact set: "lib/libx.so"
  std::string sha256;
  std::uint64_t size = 0;
  arch::ArchList requested_sass;  // what the plan asked for: "sm_80"
  arch::ArchList requested_ptx;   // "compute_90"
  arch::ArchList embedded_sass;   // what the inspector found in the file
  arch::ArchList embedded_ptx;
  FileChunks chunks;  // a large file's chunk digests: a pull checks these, on several threads
  // Permission bits, 0777 at most (never setuid, setgid or sticky); unset in
  // a manifest written before modes were signed.
  std::optional<unsigned> mode;
  std::vector<LibraryNeed> needs;  // empty: none (or a manifest written before needs)
  bool operator==(const ManifestFile&) const = default;
};

// Why the watcher (orchestrate watch) rebuilt a set: what the newest
// verified set before it was built with, and what this one was built
// with instead. Signed with the rest; absent on a set built by hand.
// Like "chunks", it came without a version bump: a manifest without it has
// the bytes it always had.
struct RebuildTrigger {
  std::string reason;                      // "CUDA 13.0.1 -> 13.0.2 (127.0.0.1:5000/nvidia/cuda:...)"
  std::optional<digest::Digest> from_set;  // the replaced set's manifest
  std::string from_toolkit;                // "13.0.1"
  std::string from_image;
  std::string from_image_digest;  // empty when unknown
  std::string to_toolkit;
  std::string to_image;
  std::string to_image_digest;
  bool operator==(const RebuildTrigger&) const = default;
};

// The tier a set was built and verified for, as the configuration declared
// it then: a node that fetches without the configuration judges the set
// against these GPUs and this PTX policy. Signed with the rest; absent on a
// set built before it was recorded (like "trigger", no version bump: a
// manifest without it has the bytes it always had).
struct BuiltFor {
  struct Gpu {
    std::string name;  // "H100"; empty for a GPU the configuration gave as a CC
    std::string cc;    // "9.0"
    bool operator==(const Gpu&) const = default;
  };
  std::vector<Gpu> gpus;  // in the configuration's order
  std::string ptx;        // the tier's PTX policy: "none" | "highest" | "all"
  bool operator==(const BuiltFor&) const = default;
};

// The permission bits a file of a set is written with, given `found`, the
// mode its pack entry (or the index row) gives it: the manifest's own; for a
// manifest without modes, 0755 when `found` lets the owner execute, else
// 0644, so no group- or world-writable, setuid or setgid file ever lands.
unsigned landing_mode(const ManifestFile& file, unsigned found);
// Empty when `found`, a pack entry's mode with its setuid, setgid and sticky
// bits, is the manifest's (or the manifest has none); else what differs.
std::string mode_problem(const ManifestFile& file, unsigned found);
// "0755".
std::string mode_text(unsigned mode);

struct Manifest {
  static constexpr int k_schema_version = 2;
  std::string recipe;
  std::string framework;
  std::string tier;
  std::string key;
  std::string source_kind;      // "path" | "git"
  std::string source_revision;  // git commit, or "tree:<sha256>"
  std::string engine;           // "docker" | "podman" | "host"
  std::string image;            // reference; "host" for the host engine
  std::string image_digest;     // empty when unknown
  std::string toolkit;
  std::string cudnn;          // empty when none
  std::string host_compiler;  // empty when unknown
  std::vector<ManifestFile> files;
  std::optional<digest::Digest> build_log;  // none when the build kept no log
  std::vector<std::string> warnings;
  std::string created;                                         // RFC 3339 UTC
  std::map<std::string, std::vector<SmokeAttestation>> smoke;  // per tier
  std::optional<RebuildTrigger> trigger;                       // set by the watcher's rebuilds
  std::optional<BuiltFor> built_for;                           // the tier's GPUs, by build
  bool operator==(const Manifest&) const = default;
};

// The canonical bytes: what is stored, hashed and signed.
std::string canonical_json(const Manifest& manifest);

struct ManifestError {
  enum class Kind {
    not_ours,   // not JSON, or no / another schema_version: a cache miss
    malformed,  // schema 2 that breaks its rules: a bad or tampered manifest
  };
  Kind kind = Kind::not_ours;
  std::string message;  // with the JSON path: "files[2].sha256: ..."
};

// Strict: every key known and of its type, digests in hex, sizes bounded
// (the text, strings, list lengths, nesting). Never throws.
std::expected<Manifest, ManifestError> parse_manifest(std::string_view text);

// Limits the parser enforces.
inline constexpr std::size_t k_max_manifest_bytes = 16u << 20;
inline constexpr std::size_t k_max_manifest_files = 100'000;
inline constexpr std::size_t k_max_manifest_string = 64u << 10;
inline constexpr std::size_t k_max_manifest_list = 4096;
inline constexpr std::uint32_t k_max_gpu_ordinal = 1024;

}  // namespace orc::cache
