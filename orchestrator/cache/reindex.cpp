// rebuild_index (maintenance.hpp): a new index from what the store's blobs
// hold: manifests, the signature documents that sign them, and the packs
// older stores kept beside the files (the only record of their modes there).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/maintenance.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/util/file_lock.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

// A signature document is ~250 bytes; anything near this is not one.
constexpr std::uint64_t k_max_signature_bytes = 64 << 10;
constexpr std::string_view k_zstd_magic = "\x28\xb5\x2f\xfd";

// The first `n` bytes of a file; fewer when it is shorter or unreadable.
std::string head_of(const fs::path& path, std::size_t n) {
  std::string out(n, '\0');
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  ssize_t got;
  while ((got = ::read(fd, out.data(), n)) < 0 && errno == EINTR) {
  }
  ::close(fd);
  out.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return out;
}

struct SignatureBlob {
  digest::Digest digest;
  std::string text;
};

struct ManifestBlob {
  Manifest manifest;
  std::string bytes;
  fs::file_time_type stored;  // when the blob was written
};

// The blobs that are more than bytes to the index, sorted out.
struct Found {
  std::map<digest::Digest, ManifestBlob> manifests;                 // by digest
  std::map<digest::Digest, std::vector<SignatureBlob>> signatures;  // by the digest they sign
  std::vector<StoredBlob> zstd;                                     // packs (or files that are .zst)
};

// Only the blobs that can be a manifest or a signature document (JSON of
// bounded size) are read whole, each re-hashed on the way: one that no longer
// matches its name is left out here and quarantined by verify.
void sort_out(const Store& store, const StoredBlob& blob, Found& found) {
  const std::string head = head_of(blob.path, k_zstd_magic.size());
  if (head == k_zstd_magic) {
    found.zstd.push_back(blob);
    return;
  }
  // A blob's file name is its digest, parsed here once; an ill-named file is
  // none of the index's business (verify quarantines it).
  const auto name = digest::Digest::from_hex(blob.name);
  if (!head.starts_with("{") || blob.size > k_max_manifest_bytes || !name) return;
  auto bytes = store.read_blob(*name);
  if (!bytes) return;
  if (auto manifest = parse_manifest(*bytes)) {
    std::error_code ec;
    found.manifests.emplace(*name,
                            ManifestBlob{std::move(*manifest), std::move(*bytes), fs::last_write_time(blob.path, ec)});
    return;
  }
  if (blob.size > k_max_signature_bytes) return;
  if (auto doc = parse_signature(*bytes)) found.signatures[doc->signed_digest].push_back({*name, std::move(*bytes)});
}

// The signature of the row: one a trusted key verifies if there is one, else
// the first by name (kept, as a pull keeps an untrusted one, unverified).
void attach_signature(IndexEntry& entry, const ManifestBlob& blob, const std::vector<SignatureBlob>* signatures,
                      const TrustedKeys& trusted) {
  if (!signatures) return;
  for (const auto& s : *signatures) {
    const Verification v = verify_manifest(blob.bytes, s.text, trusted);
    const bool verified = v.status == VerifyStatus::verified;
    if (!verified && entry.signature) continue;
    entry.signature = s.digest;
    entry.signer = v.key_id;
    entry.verified = verified;
    if (verified) return;
  }
}

// "name\0size\n" per file, sorted: what identifies the files of a set, and
// a pack of exactly those files.
std::string files_key(std::vector<std::pair<std::string, std::uint64_t>> files) {
  std::ranges::sort(files);
  std::string key;
  for (const auto& [name, size] : files) key += name + '\0' + std::to_string(size) + '\n';
  return key;
}

std::string files_key(const IndexEntry& entry) {
  std::vector<std::pair<std::string, std::uint64_t>> files;
  for (const auto& f : entry.files) files.emplace_back(f.path, f.size);
  return files_key(std::move(files));
}

// A pack an older store kept beside the files of a set: where their modes
// are. It names the sets whose files it holds exactly; packs with a link or
// anything else but regular files match none.
void attach_packs(const std::vector<StoredBlob>& candidates, std::vector<IndexEntry>& entries) {
  std::set<std::string> named;  // a set's file or log is not its pack
  std::multimap<std::string, IndexEntry*> by_files;
  for (auto& e : entries) {
    for (const auto& f : e.files) named.insert(f.sha256);
    if (e.build_log) named.insert(e.build_log->hex());
    by_files.emplace(files_key(e), &e);
  }
  for (const auto& blob : candidates) {
    const auto name = digest::Digest::from_hex(blob.name);
    if (named.contains(blob.name) || !name) continue;
    auto members = list_pack(blob.path, k_max_manifest_files);
    if (!members || !std::ranges::all_of(*members, &PackMember::regular)) continue;
    std::vector<std::pair<std::string, std::uint64_t>> files;
    for (const auto& m : *members) files.emplace_back(m.name, m.size);
    const auto [first, last] = by_files.equal_range(files_key(std::move(files)));
    for (auto it = first; it != last; ++it) {
      IndexEntry& e = *it->second;
      e.pack = *name;
      for (auto& f : e.files) f.mode = std::ranges::find(*members, f.path, &PackMember::name)->mode;
    }
  }
}

}  // namespace

std::expected<RebuildReport, Error> rebuild_index(const fs::path& root, const TrustedKeys& trusted,
                                                  std::ostream& progress) {
  auto opened = Store::open_for_rebuild(root);
  if (!opened) return std::unexpected(opened.error());
  Store& store = *opened;
  const util::FileLock lock(store.lock_file(), progress);
  auto blobs = store.list_blobs();
  if (!blobs) return std::unexpected(blobs.error());
  std::ranges::sort(*blobs, {}, &StoredBlob::name);
  RebuildReport report{.blobs = blobs->size()};
  Found found;
  for (const auto& blob : *blobs) sort_out(store, blob, found);

  std::vector<IndexEntry> entries;
  std::map<digest::Digest, fs::file_time_type> stored_at;  // by manifest
  std::map<digest::Digest, std::size_t> unsigned_modes;    // by manifest: files signed before modes were
  for (const auto& [manifest, blob] : found.manifests) {
    stored_at[manifest] = blob.stored;
    unsigned_modes[manifest] = std::ranges::count_if(blob.manifest.files, [](const auto& f) { return !f.mode; });
    IndexEntry entry = index_entry(blob.manifest, manifest);
    const auto signatures = found.signatures.find(manifest);
    attach_signature(entry, blob, signatures == found.signatures.end() ? nullptr : &signatures->second, trusted);
    if (auto complete = store.check_blobs(entry); !complete) {
      report.skipped.push_back(manifest.to_string() + " (" + entry.recipe + " for " + entry.tier +
                               "): " + complete.error().message);
      continue;
    }
    entries.push_back(std::move(entry));
  }
  attach_packs(found.zstd, entries);
  // Oldest first, as they were recorded: sets of one second (created has no
  // finer grain) in the order their manifests were stored, which decides
  // which of them is the newest.
  std::ranges::sort(entries, {},
                    [&](const IndexEntry& e) { return std::tuple(e.created, stored_at[e.manifest], e.manifest); });
  for (auto& entry : entries) {
    if (!entry.pack) report.unknown_modes += unsigned_modes[entry.manifest];
    auto id = store.index().add(entry);
    if (!id) return std::unexpected(id.error());
    entry.id = *id;
  }
  auto kept = store.install_index();
  if (!kept) return std::unexpected(kept.error());
  report.old_index = std::move(*kept);
  report.sets.assign(entries.rbegin(), entries.rend());
  return report;
}

}  // namespace orc::cache
