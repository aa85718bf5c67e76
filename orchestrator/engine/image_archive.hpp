#pragma once
// An image archive (GET /images/{id}/get, `docker save`) rewritten as it
// streams into one POST /images/load takes: the same layers, byte for
// byte, under a new image config and a new tag. The engine then has a new
// image beside the old one, which is left as it was. Layers pass through
// without being held; only the archive's small JSON entries (manifest.json,
// index.json, configs, OCI manifests; at most 8 MiB each) wait for the end,
// where manifest.json says which one is the config.
//
// What is written: every entry of the archive except manifest.json,
// index.json, oci-layout, repositories and the old config (an OCI
// manifest blob may stay: nothing names it), then the new config, then a
// manifest.json naming it, the same layers and the new tag, which is what
// `docker load` reads (Docker 25+ and Podman read it when the archive has
// no index.json).
#include <cstddef>
#include <expected>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "orchestrator/engine/error.hpp"

namespace orc::engine {

using ArchiveSource = std::function<std::expected<std::size_t, std::string>(std::span<std::byte>)>;
using ArchiveSink = std::function<bool(std::string_view)>;
// The config's JSON in, the new one out (or why it cannot be made).
using ConfigEdit = std::function<std::expected<std::string, std::string>(const std::string& config)>;

struct Rewritten {
  std::string config_digest;  // "sha256:..." of the new config: the new image's ID
};

// Errors: protocol (not an image archive, no manifest.json, a damaged
// stream), invalid_spec (the edit refused), io (the sink stopped taking
// bytes).
std::expected<Rewritten, Error> rewrite_image_archive(const ArchiveSource& in, const ArchiveSink& out,
                                                      const ConfigEdit& edit, std::string_view tag);

}  // namespace orc::engine
