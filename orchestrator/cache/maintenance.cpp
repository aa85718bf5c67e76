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
  VerifyReport report{.read_only = store.read_only() != nullptr};
  std::error_code ec;
  for (const auto& blob : *blobs) {
    const auto actual = hash_file(blob.path);
    ++report.blobs;
    report.bytes += blob.size;
    if (actual && actual->hex() == blob.name && well_placed(blob)) continue;
    if (report.read_only) {
      report.corrupt.push_back({.digest = blob.name, .actual = actual ? actual->hex() : "unreadable"});
      continue;
    }
    fs::create_directories(store.quarantine_dir(), ec);
    QuarantinedBlob bad{.digest = blob.name,
                        .actual = actual ? actual->hex() : "unreadable",
                        .moved_to = temp_name(store.quarantine_dir(), blob.name),
                        .dropped = {}};
    // The .tmp suffix of temp_name is not wanted here: quarantine is kept.
    bad.moved_to.replace_extension(".bad");
    if (::rename(blob.path.c_str(), bad.moved_to.c_str()) != 0)
      return std::unexpected(store.explain(errno_error("moving to quarantine", blob.path)));
    auto dropped = store.index().remove_referencing(blob.name);
    if (!dropped) return std::unexpected(store.explain(dropped.error()));
    bad.dropped = std::move(*dropped);
    report.corrupt.push_back(std::move(bad));
  }
  auto referenced = store.index().referenced_blobs();
  if (!referenced) return std::unexpected(referenced.error());
  for (const auto& hex : *referenced) {
    if (store.has_blob(hex)) continue;
    if (!report.read_only) {
      auto dropped = store.index().remove_referencing(hex);
      if (!dropped) return std::unexpected(store.explain(dropped.error()));
    }
    report.missing.push_back(hex);
  }
  return report;
}

void TmpSweep::add(const TmpSweep& other) {
  removed_temps += other.removed_temps;
  scratch.removed += other.scratch.removed;
  scratch.bytes += other.scratch.bytes;
  // The later sweep saw the trees still there.
  scratch.in_use = other.scratch.in_use;
  scratch.unowned = other.scratch.unowned;
  scratch.in_use_total = other.scratch.in_use_total;
  scratch.unowned_total = other.scratch.unowned_total;
}

void GcReport::add(const GcReport& other) {
  removed_sets.insert(removed_sets.end(), other.removed_sets.begin(), other.removed_sets.end());
  dropped_packs.insert(dropped_packs.end(), other.dropped_packs.begin(), other.dropped_packs.end());
  removed_blobs += other.removed_blobs;
  removed_bytes += other.removed_bytes;
  tmp.add(other.tmp);
  index_untouched = other.index_untouched;
}

namespace {

// sweep_tmp's work, the lock already held.
TmpSweep sweep_held(const fs::path& tmp_dir) {
  TmpSweep out;
  // Only what temp_name() makes (files, and a pull's unpacked trees), the
  // trees of unpacks whose process is gone and scratch trees whose owner
  // is gone: anything else in tmp/ is not the store's to judge. No pull
  // runs now: each holds a pin, this the lock.
  std::error_code ec;
  for (auto it = fs::directory_iterator(tmp_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code rm;
    if (it->path().extension() == ".tmp" && fs::remove_all(it->path(), rm) > 0) ++out.removed_temps;
  }
  out.removed_temps += remove_abandoned_unpacks(tmp_dir);
  out.scratch = sweep_scratch_trees(tmp_dir);
  return out;
}

// Removes every blob no set names; counts into `report`.
std::expected<void, Error> remove_unreferenced(Store& store, GcReport& report) {
  auto referenced = store.index().referenced_blobs();
  if (!referenced) return std::unexpected(store.explain(referenced.error()));
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
  return {};
}

// The sets past the newest `keep` of each recipe x tier, out of the index.
std::expected<void, Error> prune_sets(Store& store, std::size_t keep, GcReport& report) {
  auto sets = store.index().list();
  if (!sets) return std::unexpected(sets.error());
  std::map<std::pair<std::string, std::string>, std::size_t> seen;  // newest first, so count as we go
  for (const auto& set : *sets) {
    if (++seen[{set.recipe, set.tier}] <= keep) continue;
    if (auto ok = store.index().remove(set.manifest); !ok) return std::unexpected(store.explain(ok.error()));
    report.removed_sets.push_back(set.manifest);
  }
  return {};
}

}  // namespace

std::expected<TmpSweep, Error> sweep_tmp(const fs::path& root, std::ostream& progress) {
  std::error_code ec;
  if (!fs::exists(Store::lock_file_of(root), ec)) return TmpSweep{};
  const util::FileLock lock(Store::lock_file_of(root), progress);
  return sweep_held(Store::tmp_dir_of(root));
}

std::expected<GcReport, Error> collect_garbage(Store& store, const GcOptions& options, std::ostream& progress) {
  if (const Error* why = store.read_only(); why && !is_full(*why))
    return std::unexpected(Error{ErrorKind::io, "gc cannot remove anything: " + why->message, why->os_error});
  const util::FileLock lock(store.lock_file(), progress);
  if (auto sound = store.index().check(); !sound) return std::unexpected(sound.error());
  GcReport report;
  report.tmp = sweep_held(store.tmp_dir());
  if (auto ok = remove_unreferenced(store, report); !ok) return std::unexpected(ok.error());
  if (const Error* why = store.read_only()) {
    report.index_untouched = why->message;
    return report;
  }
  if (options.keep)
    if (auto ok = prune_sets(store, *options.keep, report); !ok) return std::unexpected(ok.error());
  auto dropped = drop_redundant_packs(store);
  if (!dropped) return std::unexpected(store.explain(dropped.error()));
  report.dropped_packs = std::move(*dropped);
  if (!report.removed_sets.empty() || !report.dropped_packs.empty())
    if (auto ok = remove_unreferenced(store, report); !ok) return std::unexpected(ok.error());
  return report;
}

}  // namespace orc::cache
