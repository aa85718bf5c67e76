#include "orchestrator/app/cluster/source_snapshot.hpp"

#include <ctime>
#include <nlohmann/json.hpp>

#include "orchestrator/app/build/build_source.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/engine/archive.hpp"
#include "orchestrator/engine/source_tar.hpp"
#include "orchestrator/registry/layout.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using util::ExitCode;
using util::Failure;

namespace {

// A signature document is ~250 bytes; a snapshot's config is one line.
constexpr std::uint64_t k_max_small_blob = 64 << 10;
constexpr std::size_t k_max_signatures = 8;

[[noreturn]] void registry_failed(const registry::Error& error, std::string_view doing) {
  throw Failure(site::exit_code_for(error), std::string(doing) + ": " + error.message);
}

std::string config_json(std::string_view revision) {
  return nlohmann::ordered_json{{"revision", revision}, {"schema", 1}}.dump();
}

// Removes a file or tree when it goes.
struct Removed {
  fs::path path;
  ~Removed() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Whether a trusted key signed `body` (the manifest `digest`), from its
// signature referrers; the outcome of the first when none verifies.
cache::Verification signature_of(registry::Client& client, const digest::Digest& digest, const std::string& body,
                                 const cache::TrustedKeys& trusted, const fs::path& temp) {
  auto referrers = client.referrers(digest, registry::k_signature_artifact_type);
  if (!referrers) registry_failed(referrers.error(), "listing the signatures of source snapshot " + digest.to_string());
  cache::Verification best = cache::verify_manifest(body, std::nullopt, trusted);
  for (std::size_t i = 0; i < referrers->size() && i < k_max_signatures; ++i) {
    auto fetched = client.get_manifest((*referrers)[i].digest.to_string());
    if (!fetched) registry_failed(fetched.error(), "fetching a signature of source snapshot " + digest.to_string());
    auto parsed = registry::parse_manifest(fetched->body);
    if (!parsed) continue;
    auto layer = registry::read_signature(*parsed, digest);
    if (!layer || layer->size > k_max_small_blob) continue;
    if (auto got = client.fetch_blob(layer->digest, layer->size, temp); !got)
      registry_failed(got.error(), "fetching a signature of source snapshot " + digest.to_string());
    auto text = cache::read_file(temp);
    if (!text) throw Failure(ExitCode::outside_failure, text.error().message);
    auto verification = cache::verify_manifest(body, *text, trusted);
    if (i == 0 || verification.status == cache::VerifyStatus::verified) best = std::move(verification);
    if (best.status == cache::VerifyStatus::verified) break;
  }
  return best;
}

}  // namespace

std::string sources_url(std::string_view remote_url) {
  std::string url(remote_url);
  while (url.ends_with('/')) url.pop_back();
  return url + "/sources";
}

std::string source_tag(std::string_view revision) {
  const std::string_view hex = revision.starts_with("tree:") ? revision.substr(5) : revision;
  return "tree-" + std::string(hex);
}

std::optional<digest::Digest> find_source(registry::Client& client, std::string_view revision) {
  auto found = client.get_manifest(source_tag(revision));
  if (found) return found->digest;
  if (found.error().kind == registry::ErrorKind::not_found) return std::nullopt;
  registry_failed(found.error(),
                  "looking for the source snapshot " + source_tag(revision) + " at " + client.display_url());
}

ShippedSource ship_source(registry::Client& client, const fs::path& dir, std::string_view revision,
                          const cache::SigningKey& key, const fs::path& temp_dir) {
  std::error_code ec;
  fs::create_directories(temp_dir, ec);
  const Removed tar{cache::temp_name(temp_dir, "source-snapshot")};
  if (auto written = engine::write_source_tar(dir, tar.path); !written)
    throw Failure(
        written.error().kind == engine::ErrorKind::invalid_spec ? ExitCode::bad_input : ExitCode::outside_failure,
        written.error().message);
  // The tree read for the tar must be the one the build was keyed with.
  auto hash = tree_hash(dir);
  if (!hash) throw Failure(ExitCode::bad_input, hash.error());
  if (*hash != revision)
    throw Failure(ExitCode::bad_input, "source " + dir.string() + " changed while it was being shipped (" +
                                           std::string(revision) + ", now " + *hash + "); render again");
  digest::Sha256 hasher;
  const auto size = digest::hash_file(tar.path, hasher);
  if (!size) throw Failure(ExitCode::outside_failure, size.error());
  const registry::Descriptor layer{.media_type = std::string(k_layer_tar), .digest = hasher.digest(), .size = *size};
  const std::string config = config_json(revision);
  registry::Manifest manifest{.media_type = std::string(registry::k_oci_manifest),
                              .artifact_type = std::string(k_source_artifact_type),
                              .config = registry::describe(k_source_config, config),
                              .layers = {layer},
                              .subject = std::nullopt,
                              .annotations = {{"dev.orchestrate.revision", std::string(revision)}}};
  const std::string body = registry::image_manifest(manifest);
  const std::string doing = "pushing the source snapshot of " + dir.string() + " to " + client.display_url();

  ShippedSource shipped{.manifest = digest::sha256(body), .bytes = *size};
  auto pushed = client.push_blob(layer.digest, tar.path);
  if (!pushed) registry_failed(pushed.error(), doing);
  shipped.uploaded = pushed->uploaded;
  for (const std::string& blob : {config, std::string(registry::k_empty_json)})
    if (auto ok = client.push_blob(digest::sha256(blob), blob); !ok) registry_failed(ok.error(), doing);
  const std::string signature = cache::signature_json(cache::sign_manifest(key, body));
  const auto signature_blob = registry::describe(registry::k_signature_layer, signature);
  if (auto ok = client.push_blob(signature_blob.digest, signature); !ok) registry_failed(ok.error(), doing);
  // The snapshot by its digest first, signed, then the tag that finds it.
  auto put = client.put_manifest(shipped.manifest.to_string(), registry::k_oci_manifest, body);
  if (!put) registry_failed(put.error(), doing);
  const std::string signature_json = registry::signature_manifest(
      registry::describe(registry::k_oci_manifest, body), signature_blob, cache::utc_rfc3339(std::time(nullptr)));
  auto parsed = registry::parse_manifest(signature_json);
  if (!parsed) registry_failed(parsed.error(), doing);
  if (auto ok = client.put_referrer(*parsed, signature_json); !ok) registry_failed(ok.error(), doing);
  if (auto ok = client.put_manifest(source_tag(revision), registry::k_oci_manifest, body); !ok)
    registry_failed(ok.error(), doing);
  return shipped;
}

std::string fetch_source(registry::Client& client, const digest::Digest& digest, const cache::TrustedKeys& trusted,
                         const fs::path& dest) {
  const std::string what = "source snapshot " + digest.to_string() + " at " + client.display_url();
  auto fetched = client.get_manifest(digest.to_string());  // the client checks the body's digest
  if (!fetched) registry_failed(fetched.error(), "fetching " + what);
  auto manifest = registry::parse_manifest(fetched->body);
  if (!manifest) throw Failure(ExitCode::check_failed, what + ": " + manifest.error().message);
  if (manifest->artifact_type != k_source_artifact_type || manifest->config.media_type != k_source_config ||
      manifest->layers.size() != 1 || manifest->layers[0].media_type != k_layer_tar ||
      manifest->config.size > k_max_small_blob)
    throw Failure(ExitCode::check_failed,
                  what + " is not a source snapshot (" + std::string(k_source_artifact_type) + " with one tar layer)");

  const fs::path parent = dest.parent_path().empty() ? fs::path(".") : dest.parent_path();
  const Removed temp{cache::temp_name(parent, "source-fetch")};
  std::error_code ec;
  fs::create_directories(temp.path, ec);
  if (ec) throw Failure(ExitCode::outside_failure, "creating " + temp.path.string() + ": " + ec.message());
  const cache::Verification signed_by = signature_of(client, digest, fetched->body, trusted, temp.path / "signature");
  if (signed_by.status != cache::VerifyStatus::verified)
    throw Failure(ExitCode::check_failed, what + ": " + signed_by.detail);

  // The signed config names the revision; the tree must hash to it.
  if (auto got = client.fetch_blob(manifest->config.digest, manifest->config.size, temp.path / "config"); !got)
    registry_failed(got.error(), "fetching " + what);
  auto config_text = cache::read_file(temp.path / "config");
  if (!config_text) throw Failure(ExitCode::outside_failure, config_text.error().message);
  const auto config = nlohmann::json::parse(*config_text, nullptr, false);
  if (!config.is_object() || !config.contains("revision") || !config["revision"].is_string() ||
      !config["revision"].get<std::string>().starts_with("tree:"))
    throw Failure(ExitCode::check_failed, what + ": its config names no tree revision");
  const std::string revision = config["revision"].get<std::string>();

  const fs::path tar = temp.path / "source.tar";
  if (auto got = client.fetch_blob(manifest->layers[0].digest, manifest->layers[0].size, tar); !got)
    registry_failed(got.error(), "fetching " + what);
  if (auto unpacked = engine::extract_tar(tar, dest); !unpacked)
    throw Failure(unpacked.error().kind == engine::ErrorKind::io ? ExitCode::outside_failure : ExitCode::check_failed,
                  what + ": " + unpacked.error().message);
  auto hash = tree_hash(dest);
  if (!hash || *hash != revision) {
    fs::remove_all(dest, ec);
    throw Failure(ExitCode::check_failed,
                  what + ": the unpacked tree is " + (hash ? *hash : hash.error()) + ", not the signed " + revision);
  }
  return revision;
}

}  // namespace orc::app
