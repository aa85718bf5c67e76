#pragma once
// A minimal OCI image (an empty config, one small layer) pushed under a tag
// through our registry client: what the watcher suites put in a registry to
// stand for an nvidia/cuda tag whose manifest digest the feed reads.
#include <expected>
#include <string>
#include <string_view>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/client.hpp"
#include "orchestrator/registry/layout.hpp"

namespace orc::integration {

// The image manifest whose config is `config` and whose one layer is `layer`.
inline std::string image_manifest(const std::string& config, const std::string& layer) {
  const auto descriptor = [](std::string_view media, const std::string& bytes) {
    return std::string(R"({"mediaType":")") + std::string(media) + R"(","digest":")" +
           digest::sha256(bytes).to_string() + R"(","size":)" + std::to_string(bytes.size()) + "}";
  };
  return R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":)" +
         descriptor("application/vnd.oci.image.config.v1+json", config) + R"(,"layers":[)" +
         descriptor("application/vnd.oci.image.layer.v1.tar", layer) + "]}";
}

// Pushes blobs, then the manifest under `tag`; its digest, or what failed.
inline std::expected<std::string, std::string> push_test_image(registry::Client& client, const std::string& tag,
                                                               const std::string& layer) {
  const std::string config = R"({"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}})";
  for (const std::string* blob : {&config, &layer})
    if (auto pushed = client.push_blob(digest::sha256(*blob), *blob); !pushed)
      return std::unexpected(pushed.error().message);
  const std::string manifest = image_manifest(config, layer);
  if (auto put = client.put_manifest(tag, registry::k_oci_manifest, manifest); !put)
    return std::unexpected(put.error().message);
  return digest::sha256(manifest).to_string();
}

}  // namespace orc::integration
