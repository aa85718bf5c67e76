#pragma once
// The local store: content-addressed blobs and an index from cache key to
// the manifest of the build that key produced. Layout under the root, each
// part versioned in its directory name so later formats can sit beside it:
//
//   blobs.v1/sha256/ab/abcdef...   artifact files, build logs, manifests
//   builds.v1/<key>.json           {"schema_version": 1, "key": ..., "manifest": "sha256:..."}
//   logs/                          build logs as they are written
//   workspaces.v1/<recipe>/        git checkouts and bazel output roots kept between builds
//   tmp/                           scratch builds and files on their way in
//
// Every file is written to tmp/, fsynced and renamed into place, so a reader
// sees a whole file or none; the entry is written after every blob it names.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orc::app {

// $ORCHESTRATE_CACHE_DIR, else $XDG_CACHE_HOME/orchestrate, else
// $HOME/.cache/orchestrate.
std::filesystem::path default_store_root();

// Writes `bytes` to `target` through a temporary file in `tmp_dir` (same file
// system), fsync, rename, and an fsync of the target's directory.
std::expected<void, std::string> write_file_atomic(const std::filesystem::path& target, std::string_view bytes,
                                                   const std::filesystem::path& tmp_dir);

class Store {
 public:
  explicit Store(std::filesystem::path root);

  const std::filesystem::path& root() const { return m_root; }
  std::filesystem::path tmp_dir() const { return m_root / "tmp"; }
  std::filesystem::path logs_dir() const { return m_root / "logs"; }
  std::filesystem::path workspace_dir(std::string_view recipe) const;

  // blobs.v1/sha256/ab/abcdef... for a lower-case hex digest.
  std::filesystem::path blob_path(std::string_view hex) const;
  bool has_blob(std::string_view hex) const;
  // Stores a copy of `file`, hashing it on the way; returns its hex digest.
  // A blob already present is left as it is.
  std::expected<std::string, std::string> put_file(const std::filesystem::path& file);
  std::expected<std::string, std::string> put_bytes(std::string_view bytes);
  std::expected<std::string, std::string> read_blob(std::string_view hex) const;

  // The manifest digest recorded for `key`; nullopt when there is none, or
  // the entry is of a schema this version does not know (a miss, never an
  // error), or names a manifest blob that is gone.
  std::optional<std::string> lookup(std::string_view key) const;
  std::expected<void, std::string> record(std::string_view key, std::string_view manifest_hex);

 private:
  std::filesystem::path m_root;
};

struct ManifestArtifact {
  std::string name;  // relative to the tree it was collected from: "build/saxpy"
  std::string sha256;
  std::uint64_t size = 0;
  std::vector<std::string> sass;  // embedded, as the inspector names them: "sm_80"
  std::vector<std::string> ptx;   // "compute_90"
};

// What was asked, what was built, what it holds and where it ran (schema
// version 1). Signing is added beside it later, not inside it.
struct Manifest {
  static constexpr int k_schema_version = 1;
  std::string key;
  std::string recipe;
  std::string framework;
  std::string tier;
  std::string source_kind;      // "path" | "git"
  std::string source_revision;  // git commit, or "tree:<sha256>"
  std::string engine;           // "docker", "podman", "host"
  std::string image;            // reference; "host" for the host engine
  std::string image_digest;     // empty when unknown
  std::string toolkit;
  std::string cudnn;          // empty when none
  std::string host_compiler;  // empty when unknown
  std::vector<std::string> requested_sass;
  std::vector<std::string> requested_ptx;
  std::vector<ManifestArtifact> artifacts;
  std::string build_log;  // sha256 hex of the build log blob
  std::vector<std::string> warnings;
  std::string created;  // UTC, RFC 3339
};

std::string manifest_to_json(const Manifest& manifest);
// nullopt for text that is not a manifest of a known schema version.
std::optional<Manifest> manifest_from_json(std::string_view text);

}  // namespace orc::app
