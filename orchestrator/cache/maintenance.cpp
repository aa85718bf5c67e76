#include "orchestrator/cache/maintenance.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <set>

#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/file_lock.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

std::optional<digest::Digest> hash_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  digest::Sha256 hasher;
  std::vector<char> buffer(1 << 20);
  ssize_t n;
  while ((n = ::read(fd, buffer.data(), buffer.size())) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) hasher.update(std::as_bytes(std::span(buffer.data(), static_cast<std::size_t>(n))));
  ::close(fd);
  if (n < 0) return std::nullopt;
  return hasher.digest();
}

// A blob's place in the layout: blobs.v1/sha256/<first two>/<64 hex>.
bool well_placed(const StoredBlob& blob) {
  return is_sha256_hex(blob.name) && blob.path.parent_path().filename() == blob.name.substr(0, 2);
}

// What the set's file blobs pack to: remembered in the index (push uses it
// too), else packed into tmp/ and hashed once. nullopt when they cannot be
// packed (a blob is gone: verify's to say).
std::optional<PackedLayer> packed_layer_of(Store& store, const IndexEntry& set) {
  const std::string key = pack_key(set);
  if (auto known = store.index().packed_layer(key); known && *known) return **known;
  const fs::path temp = temp_name(store.tmp_dir(), "gc-pack");
  std::optional<PackedLayer> layer;
  std::error_code ec;
  if (pack_stored_set(store, set, temp))
    if (auto digest = hash_file(temp)) layer = PackedLayer{.digest = *digest, .size = fs::file_size(temp, ec)};
  fs::remove(temp, ec);
  if (layer) (void)store.index().remember_packed_layer(key, *layer);  // a cache: losing it costs a pack
  return layer;
}

// The pack a set was stored with beside its files is dropped from its row
// when its files pack to the same bytes (the same layer digest); else push
// still sends it. Returns the manifests of the rows changed.
std::expected<std::vector<digest::Digest>, Error> drop_redundant_packs(Store& store) {
  auto sets = store.index().list();
  if (!sets) return std::unexpected(sets.error());
  std::vector<digest::Digest> dropped;
  for (const auto& set : *sets) {
    if (!set.pack || !store.has_blob(*set.pack)) continue;
    const auto layer = packed_layer_of(store, set);
    if (!layer || layer->digest != set.pack) continue;
    if (auto ok = store.index().drop_pack(set.manifest); !ok) return std::unexpected(ok.error());
    dropped.push_back(set.manifest);
  }
  return dropped;
}

}  // namespace

std::expected<VerifyReport, Error> verify_store(Store& store, std::ostream& progress) {
  const util::FileLock lock(store.lock_file(), progress);
  auto blobs = store.list_blobs();
  if (!blobs) return std::unexpected(blobs.error());
  VerifyReport report;
  std::error_code ec;
  for (const auto& blob : *blobs) {
    const auto actual = hash_file(blob.path);
    ++report.blobs;
    report.bytes += blob.size;
    if (actual && actual->hex() == blob.name && well_placed(blob)) continue;
    fs::create_directories(store.quarantine_dir(), ec);
    QuarantinedBlob bad{.digest = blob.name,
                        .actual = actual ? actual->hex() : "unreadable",
                        .moved_to = temp_name(store.quarantine_dir(), blob.name),
                        .dropped = {}};
    // The .tmp suffix of temp_name is not wanted here: quarantine is kept.
    bad.moved_to.replace_extension(".bad");
    if (::rename(blob.path.c_str(), bad.moved_to.c_str()) != 0)
      return std::unexpected(io_error(errno_message("moving to quarantine", blob.path)));
    auto dropped = store.index().remove_referencing(blob.name);
    if (!dropped) return std::unexpected(dropped.error());
    bad.dropped = std::move(*dropped);
    report.corrupt.push_back(std::move(bad));
  }
  auto referenced = store.index().referenced_blobs();
  if (!referenced) return std::unexpected(referenced.error());
  for (const auto& hex : *referenced) {
    if (store.has_blob(hex)) continue;
    auto dropped = store.index().remove_referencing(hex);
    if (!dropped) return std::unexpected(dropped.error());
    report.missing.push_back(hex);
  }
  return report;
}

std::expected<GcReport, Error> collect_garbage(Store& store, const GcOptions& options, std::ostream& progress) {
  const util::FileLock lock(store.lock_file(), progress);
  if (auto sound = store.index().check(); !sound) return std::unexpected(sound.error());
  GcReport report;
  if (options.keep) {
    auto sets = store.index().list();
    if (!sets) return std::unexpected(sets.error());
    std::map<std::pair<std::string, std::string>, std::size_t> seen;  // newest first, so count as we go
    for (const auto& set : *sets) {
      if (++seen[{set.recipe, set.tier}] <= *options.keep) continue;
      if (auto ok = store.index().remove(set.manifest); !ok) return std::unexpected(ok.error());
      report.removed_sets.push_back(set.manifest);
    }
  }
  auto dropped = drop_redundant_packs(store);
  if (!dropped) return std::unexpected(dropped.error());
  report.dropped_packs = std::move(*dropped);
  auto referenced = store.index().referenced_blobs();
  if (!referenced) return std::unexpected(referenced.error());
  auto blobs = store.list_blobs();
  if (!blobs) return std::unexpected(blobs.error());
  std::error_code ec;
  for (const auto& blob : *blobs) {
    if (referenced->contains(blob.name)) continue;
    if (fs::remove(blob.path, ec)) {
      ++report.removed_blobs;
      report.removed_bytes += blob.size;
    }
  }
  // Only what temp_name() makes (files, and a pull's unpacked trees) and the
  // trees of unpacks whose process is gone: anything else in tmp/ is not the
  // store's to judge. No pull runs now: each holds a pin, this the lock.
  for (auto it = fs::directory_iterator(store.tmp_dir(), ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code rm;
    if (it->path().extension() == ".tmp" && fs::remove_all(it->path(), rm) > 0) ++report.removed_temps;
  }
  report.removed_temps += remove_abandoned_unpacks(store.tmp_dir());
  return report;
}

}  // namespace orc::cache
