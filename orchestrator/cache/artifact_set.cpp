#include "orchestrator/cache/artifact_set.hpp"

#include <algorithm>
#include <chrono>

#include "orchestrator/cache/chunks.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/digest/sha256.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

arch::ArchList sorted_union(const std::vector<ManifestFile>& files, arch::ArchList ManifestFile::*member) {
  std::vector<const arch::ArchList*> lists;
  for (const auto& f : files) lists.push_back(&(f.*member));
  return arch::ArchList::union_of(lists);
}

// A file's permission bits: the caller's, else its source's (0644 when it
// cannot be read); never setuid, setgid or sticky.
unsigned file_mode(const NewArtifactSet& set, std::size_t i) {
  if (i < set.modes.size()) return set.modes[i] & 0777u;
  std::error_code ec;
  const auto perms = fs::status(set.sources[i], ec).permissions();
  return ec ? 0644u : static_cast<unsigned>(perms) & 0777u;
}

}  // namespace

std::expected<IndexEntry, Error> store_artifact_set(Store& store, NewArtifactSet set) {
  Manifest& m = set.manifest;
  if (set.sources.size() != m.files.size())
    return std::unexpected(invalid_error("store_artifact_set: " + std::to_string(set.sources.size()) + " sources for " +
                                         std::to_string(m.files.size()) + " manifest files"));
  auto held = store.pin();
  if (!held) return std::unexpected(held.error());
  for (std::size_t i = 0; i < m.files.size(); ++i) {
    auto put = store.put_file(set.sources[i]);
    if (!put) return std::unexpected(put.error());
    m.files[i].sha256 = put->digest.hex();
    m.files[i].size = put->size;
    // From the stored blob: the bytes the digest names, whatever the source
    // does meanwhile.
    auto chunks = hash_chunks(store.blob_path(put->digest), put->size);
    if (!chunks) return std::unexpected(chunks.error());
    m.files[i].chunks = std::move(*chunks);
    m.files[i].mode = file_mode(set, i);  // signed with the bytes
  }
  if (!set.build_log.empty()) {
    auto put = store.put_file(set.build_log);
    if (!put) return std::unexpected(put.error());
    m.build_log = put->digest;
  }
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  if (m.created.empty()) m.created = utc_rfc3339(now.time_since_epoch().count());
  const std::string bytes = canonical_json(m);
  auto manifest = store.put_bytes(bytes);
  if (!manifest) return std::unexpected(manifest.error());

  IndexEntry entry = index_entry(m, manifest->digest);
  entry.verified = set.verified;
  if (set.key) {
    auto signature = store.put_bytes(signature_json(sign_manifest(*set.key, bytes)));
    if (!signature) return std::unexpected(signature.error());
    entry.signature = signature->digest;
    entry.signer = set.key->public_key().key_id();
  }
  auto id = store.record(entry);
  if (!id) return std::unexpected(id.error());
  entry.id = *id;
  return entry;
}

IndexEntry index_entry(const Manifest& m, const digest::Digest& manifest) {
  IndexEntry entry{.manifest = manifest,
                   .recipe = m.recipe,
                   .tier = m.tier,
                   .key = m.key,
                   .toolkit = m.toolkit,
                   .cudnn = m.cudnn,
                   .sass = sorted_union(m.files, &ManifestFile::embedded_sass),
                   .ptx = sorted_union(m.files, &ManifestFile::embedded_ptx),
                   .build_log = m.build_log,
                   .source_revision = m.source_revision,
                   .created = unix_seconds(m.created)};
  // The signed mode; a manifest from before modes were signed says none.
  for (const auto& f : m.files)
    entry.files.push_back({.path = f.path, .sha256 = f.sha256, .size = f.size, .mode = f.mode.value_or(0644u)});
  return entry;
}

std::expected<void, Error> pack_stored_set(const Store& store, const IndexEntry& entry, const fs::path& out) {
  std::vector<PackEntry> entries;
  for (const auto& f : entry.files) entries.push_back({f.path, store.blob_path(f.sha256), f.mode});
  return pack(std::move(entries), out);
}

std::string pack_key(const IndexEntry& entry) {
  std::vector<const IndexedFile*> files;
  for (const auto& f : entry.files) files.push_back(&f);
  std::ranges::sort(files, {}, &IndexedFile::path);
  digest::Sha256 hasher;
  for (const IndexedFile* f : files) {
    const std::string line = f->path + '\0' + f->sha256 + '\0' + std::to_string(f->mode & 0777u) + '\n';
    hasher.update(std::as_bytes(std::span(line.data(), line.size())));
  }
  return hasher.digest().hex();
}

std::expected<LoadedSet, Error> load_artifact_set(const Store& store, const IndexEntry& entry,
                                                  const TrustedKeys& trusted) {
  auto bytes = store.read_blob(entry.manifest);
  if (!bytes) return std::unexpected(bytes.error());
  auto manifest = parse_manifest(*bytes);
  if (!manifest) {
    const bool miss = manifest.error().kind == ManifestError::Kind::not_ours;
    return std::unexpected(Error{miss ? ErrorKind::not_found : ErrorKind::corrupt,
                                 "manifest " + entry.manifest.to_string() + ": " + manifest.error().message});
  }
  for (const auto& f : manifest->files)
    if (!store.has_blob(f.sha256))
      return std::unexpected(Error{ErrorKind::corrupt, "artifact " + f.path + " (sha256:" + f.sha256 +
                                                           ") of manifest " + entry.manifest.to_string() + " is gone"});
  std::optional<std::string> signature;
  if (entry.signature) {
    auto text = store.read_blob(*entry.signature);
    if (!text) return std::unexpected(text.error());
    signature = std::move(*text);
  }
  return LoadedSet{.manifest = std::move(*manifest), .signature = verify_manifest(*bytes, signature, trusted)};
}

}  // namespace orc::cache
