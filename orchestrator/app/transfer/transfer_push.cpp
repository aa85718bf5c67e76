// Push: the blobs of an artifact set, then its manifests and tags (the
// layout is in transfer.hpp).
#include <algorithm>

#include "orchestrator/app/transfer/transfer.hpp"
#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/protocol.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using util::ExitCode;

namespace {

// "sm_80", "sm_90a" -> "80,90a": the annotation form (layout.hpp).
registry::ArtifactInfo info_for(const cache::Manifest& manifest) {
  const cache::IndexEntry entry = cache::index_entry(manifest, {});
  return {.created = manifest.created,
          .revision = manifest.source_revision,
          .title = manifest.recipe,
          .tier = manifest.tier,
          .sass = entry.sass.digits(),
          .ptx = entry.ptx.digits(),
          .toolkit = manifest.toolkit,
          .cudnn = manifest.cudnn,
          .recipe = manifest.recipe};
}

// Moves <recipe>--<tier> to this set unless it names a newer one already
// (created compares as text: every manifest writes RFC 3339 UTC); `force`
// (the current set) moves it whatever the time. Says which set the tag
// named before: the config blob of an artifact manifest is the set's
// manifest.
struct MovedTag {
  bool moved = false;
  std::optional<digest::Digest> previous;
};
std::expected<MovedTag, registry::Error> move_latest(registry::Client& client, const std::string& tag,
                                                     const registry::ArtifactInfo& info, const std::string& body,
                                                     bool force) {
  MovedTag out;
  auto named = client.get_manifest(tag);
  if (named) {
    if (auto parsed = registry::parse_manifest(named->body); parsed) {
      out.previous = parsed->config.digest;
      if (auto other = registry::read_artifact(*parsed); !force && other && other->created > info.created) return out;
    }
  } else if (named.error().kind != registry::ErrorKind::not_found) {
    return std::unexpected(named.error());
  }
  auto put = client.put_manifest(tag, registry::k_oci_manifest, body);
  if (!put) return std::unexpected(put.error());
  out.moved = true;
  return out;
}

}  // namespace

TransferError from_registry(const registry::Error& error) {
  if (error.kind == registry::ErrorKind::digest_mismatch)
    return {site::exit_code_for(error), "digest mismatch: " + error.message};
  if (error.kind == registry::ErrorKind::timeout)
    return {site::exit_code_for(error), error.message + "; --timeout and --min-rate (ORCHESTRATE_TIMEOUT, " +
                                            "ORCHESTRATE_MIN_RATE) set the deadlines"};
  return {site::exit_code_for(error), error.message};
}

TransferError from_cache(const cache::Error& error) { return {site::exit_code_for(error), error.message}; }

std::expected<PushedSet, TransferError> push_blobs(registry::Client& client, const SetBlobs& set,
                                                   const TransferProgress& progress) {
  auto manifest = cache::parse_manifest(set.manifest);
  if (!manifest) return std::unexpected(TransferError{ExitCode::bad_input, "manifest: " + manifest.error().message});
  PushedSet report{.tag = site::set_tag(manifest->recipe, manifest->tier, digest::sha256(set.manifest))};
  if (!digest::is_valid_tag(report.tag))
    return std::unexpected(TransferError{ExitCode::bad_input, "recipe '" + manifest->recipe + "' and tier '" +
                                                                  manifest->tier +
                                                                  "' make no valid OCI tag (128 characters at most)"});
  registry::Descriptor layer{.media_type = std::string(registry::k_layer_tar_zstd)};
  if (set.held_layer) {
    layer.digest = set.held_layer->digest;
    layer.size = set.held_layer->size;
  } else {
    digest::Sha256 hasher;
    const auto pack_size = digest::hash_file(set.pack, hasher);
    if (!pack_size) return std::unexpected(TransferError{ExitCode::outside_failure, pack_size.error()});
    layer.digest = hasher.digest();
    layer.size = *pack_size;
  }
  report.layer = {.digest = layer.digest, .size = layer.size};
  const registry::Descriptor config = registry::describe(registry::k_artifact_config, set.manifest);

  // Blobs first, each after a HEAD (push_blob skips what the registry has).
  auto count = [&](const std::expected<registry::PushedBlob, registry::Error>& pushed) {
    if (pushed) ++(pushed->uploaded ? report.uploaded : report.skipped);
  };
  std::expected<registry::PushedBlob, registry::Error> pushed = registry::PushedBlob{.uploaded = false};
  if (!set.held_layer)
    progress.upload("layer " + layer.digest.hex().substr(0, 12), layer.size, [&] {
      pushed = client.push_blob(layer.digest, set.pack);
      return pushed.has_value();
    });
  if (!pushed) return std::unexpected(from_registry(pushed.error()));
  count(pushed);
  pushed = client.push_blob(config.digest, set.manifest);
  if (!pushed) return std::unexpected(from_registry(pushed.error()));
  count(pushed);
  std::optional<registry::Descriptor> signature;
  if (!set.signature.empty()) {
    signature = registry::describe(registry::k_signature_layer, set.signature);
    for (const auto& [digest, bytes] :
         {std::pair{signature->digest, set.signature},
          std::pair{digest::sha256(registry::k_empty_json), std::string(registry::k_empty_json)}}) {
      pushed = client.push_blob(digest, bytes);
      if (!pushed) return std::unexpected(from_registry(pushed.error()));
      count(pushed);
    }
  }

  // Then the manifests: the set's own tag, its signature, the moving tag.
  const registry::ArtifactInfo info = info_for(*manifest);
  const std::string body = registry::artifact_manifest(config, std::span(&layer, 1), info);
  auto put = client.put_manifest(report.tag, registry::k_oci_manifest, body);
  if (!put) return std::unexpected(from_registry(put.error()));
  report.artifact_digest = put->digest;
  if (signature) {
    const std::string json =
        registry::signature_manifest(registry::describe(registry::k_oci_manifest, body), *signature, manifest->created);
    auto parsed = registry::parse_manifest(json);
    if (!parsed) return std::unexpected(from_registry(parsed.error()));
    auto referrer = client.put_referrer(*parsed, json);
    if (!referrer) return std::unexpected(from_registry(referrer.error()));
  }
  auto moved = move_latest(client, site::latest_tag(manifest->recipe, manifest->tier), info, body, set.current);
  if (!moved) return std::unexpected(from_registry(moved.error()));
  report.moved_latest = moved->moved;
  if (moved->previous && moved->previous != config.digest) report.previous_latest = moved->previous;
  return report;
}

std::expected<PushedSet, TransferError> push_set(cache::Store& store, registry::Client& client,
                                                 const cache::IndexEntry& entry, const TransferProgress& progress,
                                                 bool current) {
  auto held = store.pin();
  if (!held) return std::unexpected(from_cache(held.error()));
  SetBlobs blobs;
  blobs.current = current;
  auto manifest = store.read_blob(entry.manifest);
  if (!manifest) return std::unexpected(from_cache(manifest.error()));
  blobs.manifest = std::move(*manifest);
  if (entry.signature) {
    auto signature = store.read_blob(*entry.signature);
    if (!signature) return std::unexpected(from_cache(signature.error()));
    blobs.signature = std::move(*signature);
  }
  // A set an older orchestrate stored with its pack beside its files: that
  // pack is the layer (gc drops it once the files make the same bytes).
  if (entry.pack && store.has_blob(*entry.pack)) {
    blobs.pack = store.blob_path(*entry.pack);
    return push_blobs(client, blobs, progress);
  }
  // A set pushed before whose layer the registry still holds needs no
  // packing: the index remembers what its files and modes packed to.
  const std::string key = cache::pack_key(entry);
  if (auto known = store.index().packed_layer(key); known && *known) {
    auto size = client.blob_size((*known)->digest);
    if (!size) return std::unexpected(from_registry(size.error()));
    if (*size == (*known)->size) {
      blobs.held_layer = **known;
      return push_blobs(client, blobs, progress);
    }
  }
  // Else the layer is packed from the file blobs with the modes the index
  // keeps (deterministic: every push of the set, from any store that holds
  // it, sends the same layer) into tmp/, and dropped once pushed: the store
  // keeps each byte once.
  const fs::path temp = cache::temp_name(store.tmp_dir(), "push-pack");
  struct Remove {
    fs::path path;
    ~Remove() {
      std::error_code ec;
      fs::remove(path, ec);
    }
  } remove{temp};
  if (auto packed = cache::pack_stored_set(store, entry, temp); !packed)
    return std::unexpected(from_cache(packed.error()));
  blobs.pack = temp;
  auto report = push_blobs(client, blobs, progress);
  if (report)
    if (auto remembered = store.index().remember_packed_layer(key, report->layer); !remembered)
      return std::unexpected(from_cache(remembered.error()));
  return report;
}

}  // namespace orc::app
