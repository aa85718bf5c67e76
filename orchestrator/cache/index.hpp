#pragma once
// The store's index: one row per artifact set (the files one build of one
// recipe for one tier produced), in SQLite (index.v1.sqlite, WAL, a busy
// timeout so concurrent processes queue instead of failing). sqlite3.h stays
// in index.cpp (the queries), index_schema.cpp (the schema, its migration,
// opening) and the private index_sql.hpp they share.
//
// Tables (schema version 1, recorded in meta):
//   meta(key, value)                         schema_version = 1
//   artifact_sets(id, manifest UNIQUE, recipe, tier, key, toolkit, cudnn,
//                 sass, ptx, source_revision, signer, verified, created)
//   set_blobs(set_id, role, path, digest, size)
//                                            role: file | manifest | signature | log | pack
//   packed_layers(key, digest, size)         what push packed a set's files to, by
//                                            pack_key(): a cache, not a blob (it came
//                                            after the first schema 2 indexes, without a
//                                            bump: an orchestrate that does not know it
//                                            ignores it, and it is made on open)
// A blob named in set_blobs is referenced; gc removes the rest, so an index
// that lost rows would lose their blobs: an index that is missing, is not a
// database, is damaged or of another schema version is an error of kind
// invalid whose message says how to rebuild it (k_rebuild_hint), never
// replaced by an empty one behind the caller's back.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/arch_list.hpp"
#include "orchestrator/cache/error.hpp"
#include "orchestrator/digest/digest.hpp"

struct sqlite3;

namespace orc::cache {

struct IndexedFile {
  std::string path;    // inside the artifact set: "lib/libx.so"
  std::string sha256;  // hex
  std::uint64_t size = 0;
  // Permission bits the file had where it was made (a pulled set keeps no
  // pack, so its modes live here).
  unsigned mode = 0644;
  bool operator==(const IndexedFile&) const = default;
};

struct IndexEntry {
  std::int64_t id = 0;      // assigned by the index
  digest::Digest manifest;  // of the manifest's canonical bytes: the set's identity
  std::string recipe;
  std::string tier;
  std::string key;  // the cache key the build was made for
  std::string toolkit;
  std::string cudnn;              // empty when none
  arch::ArchList sass;            // embedded, union over the files: "sm_80"
  arch::ArchList ptx;             // "compute_90"
  std::vector<IndexedFile> files;
  std::optional<digest::Digest> build_log;  // none when the build kept no log
  std::optional<digest::Digest> signature;  // of the signature document blob; none when unsigned
  std::optional<digest::Digest> pack;       // of the files as tar+zstd, when packed
  std::string source_revision;
  std::string signer;        // key id; empty when unsigned
  bool verified = false;     // digest, signature and archs checked when it was recorded
  std::int64_t created = 0;  // Unix seconds
  bool operator==(const IndexEntry&) const = default;
};

// The tar+zstd push made of a set's files: its digest and size.
struct PackedLayer {
  digest::Digest digest;
  std::uint64_t size = 0;
  bool operator==(const PackedLayer&) const = default;
};

// Every filter that is set must match; results are newest first.
struct IndexQuery {
  std::string recipe;
  std::string tier;
  std::string key;
  bool verified_only = false;
};

// What rebuilds a damaged or lost index: said in every error about one.
inline constexpr const char* k_rebuild_hint =
    "rebuild it from the manifests in the store with 'orchestrate cache verify --rebuild-index'";

// Whether Index::open may make a new, empty index.
enum class IfNoIndex {
  create,  // a file that is missing (or an empty database) gets the schema
  refuse,  // an error of kind invalid: the store holds blobs this index must name
};

// How Index::open opens the file.
enum class IndexAccess {
  read_write,
  // Nothing written, for a store on a read-only or full file system: a
  // read-only connection, else, when even that needs a -shm the file system
  // cannot hold, the file alone (SQLite's immutable) provided no -wal holds
  // pages the file lacks (a -wal is empty or gone once no connection is open).
  read_only,
};

class Index {
 public:
  static constexpr int k_schema_version = 2;  // 2: set_blobs.mode

  // Opens the database, or creates it (IfNoIndex::create). Schema 1 (no file
  // modes) is upgraded in place on open, for good: an older orchestrate then
  // refuses the store. Any other version, a file that is not a database or
  // is damaged, and (with refuse) a missing one are errors of kind invalid
  // (this version cannot read it, and never rewrites it).
  // With IndexAccess::read_only, schema 1 is refused (its upgrade writes).
  static std::expected<Index, Error> open(const std::filesystem::path& file, IfNoIndex if_none = IfNoIndex::create,
                                          IndexAccess access = IndexAccess::read_write);
  Index(Index&&) noexcept;
  Index& operator=(Index&&) noexcept;
  ~Index();

  // Adds the set, or replaces the row of the same manifest; returns its id.
  std::expected<std::int64_t, Error> add(const IndexEntry& entry);
  std::expected<std::vector<IndexEntry>, Error> list(const IndexQuery& query = {}) const;
  std::expected<std::optional<IndexEntry>, Error> newest_verified(std::string_view recipe, std::string_view tier) const;
  // The set whose manifest digest starts with `prefix`: not_found when none,
  // ambiguous (naming the candidates) when several.
  std::expected<IndexEntry, Error> resolve(const digest::DigestPrefix& prefix) const;
  // Removes the set of that manifest digest; false when there was none.
  std::expected<bool, Error> remove(const digest::Digest& manifest);
  // Forgets the pack of the set of that manifest digest (its row stays as it
  // was, id and order included).
  std::expected<void, Error> drop_pack(const digest::Digest& manifest);
  // Removes every set that names blob `hex` in any role; returns their manifests.
  std::expected<std::vector<digest::Digest>, Error> remove_referencing(std::string_view hex);
  // Every blob digest any set names.
  std::expected<std::set<std::string>, Error> referenced_blobs() const;
  // What packing files of this pack_key() made before; nullopt when unknown.
  std::expected<std::optional<PackedLayer>, Error> packed_layer(std::string_view key) const;
  std::expected<void, Error> remember_packed_layer(std::string_view key, const PackedLayer& layer);
  // SQLite's own check of every page (PRAGMA quick_check): an error of kind
  // invalid when the file is damaged, before gc trusts what it says.
  std::expected<void, Error> check() const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  explicit Index(sqlite3* db);
  static std::expected<Index, Error> open_read_only(const std::filesystem::path& file, bool immutable);
  std::unique_ptr<sqlite3, Closer> m_db;
};

}  // namespace orc::cache
