#pragma once
// A recipe's local source (`source: {path: ...}`) shipped to a build Job
// through the registry, as a signed snapshot:
//
//   repository  <remote>/sources (beside the artifact repository)
//   tag         tree-<64 hex>: the tree hash the build keys with, so the
//               same tree is shipped once whatever recipe names it
//   manifest    OCI image manifest, artifactType application/vnd.orchestrate.source.v1,
//               config {"revision": "tree:<hex>", "schema": 1}
//               (application/vnd.orchestrate.source.config.v1+json), one
//               layer: the deterministic tar of engine/source_tar.hpp
//               (application/vnd.oci.image.layer.v1.tar)
//   signature   a referrer of the manifest, as an artifact set's (the
//               machine's key signs the manifest's bytes)
//
// The Job names the manifest by digest; fetching checks the digest, a
// signature by a trusted key, the layer's digest, and that the unpacked
// tree hashes to the revision the signed config names, before anything
// is built from it.
#include <filesystem>
#include <optional>
#include <string>

#include "orchestrator/cache/signing.hpp"
#include "orchestrator/digest/digest.hpp"
#include "orchestrator/registry/client.hpp"

namespace orc::app {

inline constexpr std::string_view k_source_artifact_type = "application/vnd.orchestrate.source.v1";
inline constexpr std::string_view k_source_config = "application/vnd.orchestrate.source.config.v1+json";
inline constexpr std::string_view k_layer_tar = "application/vnd.oci.image.layer.v1.tar";

// "<remote URL>/sources", credentials kept.
std::string sources_url(std::string_view remote_url);
// "tree-<hex>" for the revision "tree:<hex>".
std::string source_tag(std::string_view revision);

// The snapshot of `revision` on the remote: its manifest digest, nullopt
// when it is not there. Throws util::Failure (exit 3) when the registry fails.
std::optional<digest::Digest> find_source(registry::Client& client, std::string_view revision);

struct ShippedSource {
  digest::Digest manifest;
  std::uint64_t bytes = 0;  // the tar's
  bool uploaded = false;    // false: the remote had it
};

// Packs `dir` (whose tree hash must still be `revision`), signs and
// pushes it; `temp_dir` holds the tar meanwhile. Throws util::Failure:
// exit 2 when the tree changed or holds what a tar cannot, 3 when the
// registry fails.
ShippedSource ship_source(registry::Client& client, const std::filesystem::path& dir, std::string_view revision,
                          const cache::SigningKey& key, const std::filesystem::path& temp_dir);

// Fetches the snapshot `manifest`, checks it (above) with `trusted` and
// unpacks it into `dest` (which must not exist); its revision. Throws
// util::Failure: exit 1 when a check fails, 3 when the registry does.
std::string fetch_source(registry::Client& client, const digest::Digest& manifest, const cache::TrustedKeys& trusted,
                         const std::filesystem::path& dest);

}  // namespace orc::app
