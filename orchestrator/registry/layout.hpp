#pragma once
// How an Orchestrate artifact looks in an OCI registry, as pure functions
// (no I/O) that the transfer use cases build and read with: the artifact
// manifest (config, one layer, annotations) and the signature manifest that
// refers to it. docs/remote.md ("Registry layout") describes the layout once.
//
// A registry's JSON is untrusted: the parsers bound sizes and counts, check
// every type and digest, and return an Error (kind protocol) instead of
// throwing.
#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/digest/digest.hpp"
#include "orchestrator/registry/error.hpp"

namespace orc::registry {

inline constexpr std::string_view k_oci_manifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view k_oci_index = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view k_docker_manifest = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view k_docker_manifest_list = "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr std::string_view k_artifact_config = "application/vnd.orchestrate.artifact.config.v1+json";
inline constexpr std::string_view k_layer_tar_zstd = "application/vnd.oci.image.layer.v1.tar+zstd";
inline constexpr std::string_view k_signature_artifact_type = "application/vnd.orchestrate.signature.v1";
inline constexpr std::string_view k_signature_layer = "application/vnd.orchestrate.signature.v1.ed25519";
inline constexpr std::string_view k_empty_config = "application/vnd.oci.empty.v1+json";
inline constexpr std::string_view k_empty_json = "{}";

// Bounds on what we accept from a registry. 4 MiB is distribution's own
// manifest limit.
inline constexpr std::size_t k_max_manifest_bytes = 4 << 20;
inline constexpr std::size_t k_max_descriptors = 10'000;
inline constexpr std::size_t k_max_annotations = 1'000;
inline constexpr std::size_t k_max_string = 64 << 10;
// A manifest or an index is four levels deep; fields a reader must ignore
// get room to nest, not the depth that makes a parser's tree cost hundreds
// of MiB (util/json_nesting.hpp).
inline constexpr std::size_t k_max_manifest_depth = 64;

// What an image index entry runs on: "linux", "amd64", "" or "v8".
struct Platform {
  std::string os;
  std::string architecture;
  std::string variant;
  bool operator==(const Platform&) const = default;
};

struct Descriptor {
  std::string media_type;
  digest::Digest digest;  // "sha256:<hex>" in the JSON
  std::uint64_t size = 0;
  std::string artifact_type;  // index entries of referrers carry it
  std::map<std::string, std::string> annotations;
  std::optional<Platform> platform;  // an image index's entries carry it

  bool operator==(const Descriptor&) const = default;
};

// The descriptor of `bytes` with `media_type` (digest and size computed).
Descriptor describe(std::string_view media_type, std::string_view bytes);

// What the artifact manifest's annotations say about the build.
struct ArtifactInfo {
  std::string created;   // RFC 3339
  std::string revision;  // source revision
  std::string source;    // source URL
  std::string title;     // artifact name
  std::string version;
  std::string tier;
  std::string sass;  // "80,86,90"
  std::string ptx;   // "90"
  std::string toolkit;
  std::string cudnn;
  std::string recipe;

  bool operator==(const ArtifactInfo&) const = default;
};

struct Manifest {
  std::string media_type;
  std::string artifact_type;
  Descriptor config;
  std::vector<Descriptor> layers;
  std::optional<Descriptor> subject;
  std::map<std::string, std::string> annotations;
};

struct Index {
  std::string media_type = std::string(k_oci_index);
  std::string artifact_type;
  std::vector<Descriptor> manifests;
  std::map<std::string, std::string> annotations;
};

// The artifact manifest's JSON. `config` must have k_artifact_config and the
// layers k_layer_tar_zstd; Failure (bad_input) otherwise, or when tier or
// recipe is empty: those are the caller's bugs, not a registry's.
std::string artifact_manifest(const Descriptor& config, std::span<const Descriptor> layers, const ArtifactInfo& info);

// An OCI image manifest's JSON with `manifest`'s artifactType, config,
// layers and annotations (the media type is k_oci_manifest, the subject
// ignored): the same fields make the same bytes, so a push is idempotent.
// `images push` writes build images with it, `k8s render --push` source
// snapshots.
std::string image_manifest(const Manifest& manifest);

// The signature manifest's JSON: `signature` describes the signature bytes
// (media type k_signature_layer), `subject` the artifact manifest.
std::string signature_manifest(const Descriptor& subject, const Descriptor& signature, std::string_view created);

// An OCI image index's JSON (the referrers fallback tag holds one).
std::string index_json(const Index& index);

std::expected<Manifest, Error> parse_manifest(std::string_view json);
std::expected<Index, Error> parse_index(std::string_view json);

// The manifest of an image index that runs on `os`/`architecture`; else
// the first entry that names no platform (an index of one image often
// does not); nullptr when neither is there.
const Descriptor* platform_manifest(const Index& index, std::string_view os, std::string_view architecture);

// The artifact annotations of a manifest whose config is ours; protocol
// error when it is some other kind of manifest or tier/recipe are missing.
std::expected<ArtifactInfo, Error> read_artifact(const Manifest& manifest);

// The signature layer of a signature manifest whose subject is
// `subject_digest`; protocol error when it is not one.
std::expected<Descriptor, Error> read_signature(const Manifest& manifest, const digest::Digest& subject_digest);

// "sha256-<hex>": the tag that stands in for the referrers API.
std::string referrers_tag(const digest::Digest& digest);

}  // namespace orc::registry
