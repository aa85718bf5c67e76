#pragma once
// Keeping the store healthy: `orchestrate cache verify` (and its
// --rebuild-index) and `cache gc` as library functions. They hold the store
// lock exclusively (util::FileLock on Store::lock_file()), so they wait for
// writers holding a Pin and writers wait for them; never call them while
// this process holds a Pin.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/scratch.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/cache/store.hpp"

namespace orc::cache {

struct QuarantinedBlob {
  std::string digest;                   // the name it was stored under
  std::string actual;                   // what its bytes hash to now
  std::filesystem::path moved_to;       // in quarantine.v1/
  std::vector<digest::Digest> dropped;  // manifests of the index rows that named it
};

struct VerifyReport {
  std::uint64_t blobs = 0;  // re-hashed
  std::uint64_t bytes = 0;
  std::vector<QuarantinedBlob> corrupt;
  std::vector<std::string> missing;  // named by an index row, not stored; rows dropped
  // The store was opened read-only: what is corrupt or missing is only
  // said (moved_to empty, nothing dropped).
  bool read_only = false;
};

// Re-hashes every blob; moves each that does not match its name (or is not
// named like a blob) to quarantine.v1/ and drops the index rows that name it
// or name a blob that is missing; a store opened read-only is only read.
// `progress` hears about waits for the lock.
std::expected<VerifyReport, Error> verify_store(Store& store, std::ostream& progress);

struct GcOptions {
  // Keep this many newest artifact sets per recipe x tier; nullopt keeps all
  // and only collects what no set names.
  std::optional<std::size_t> keep;
};

// What tmp/ held that no process owns any more.
struct TmpSweep {
  std::uint64_t removed_temps = 0;  // *.tmp files and trees, trees of killed unpacks
  ScratchSweep scratch;             // build scratch trees (scratch.hpp)
  void add(const TmpSweep& other);
};

struct GcReport {
  std::vector<digest::Digest> removed_sets;   // manifest digests
  std::vector<digest::Digest> dropped_packs;  // manifests whose pack beside their files was dropped
  std::uint64_t removed_blobs = 0;
  std::uint64_t removed_bytes = 0;
  TmpSweep tmp;
  // Why the index was left as it was (a store opened read-only on a full
  // file system: no set pruned, no pack dropped); empty when it was not.
  std::string index_untouched;
  void add(const GcReport& other);
};

// Removes, in the store at `root`, every temporary in tmp/ (with the store
// lock held exclusively no writer is mid-write, so each one is left over
// from a crash), the trees of unpacks whose process is gone, and the build
// scratch trees whose owner lock is free. Needs no index and writes nothing,
// so on a full disk it frees space before anything must be written. Holds
// the store lock exclusively; does nothing where the store has no lock file.
std::expected<TmpSweep, Error> sweep_tmp(const std::filesystem::path& root, std::ostream& progress);

// Refuses (invalid, saying how to rebuild it) an index SQLite finds damaged;
// Store::open has refused a missing or unreadable one already; and a store
// opened read-only on a read-only file system (nothing could be removed).
// Then, holding the store lock exclusively: sweeps tmp/ (as sweep_tmp);
// removes every blob no set names; prunes old sets (with `keep`); drops the
// pack of each set stored with one beside its files (before packs were made
// at push time) when packing its file blobs again makes the same bytes (so
// push sends the same layer; else the pack stays and push sends it); then
// removes the blobs those left unnamed. Space is freed before the index is
// written (its -wal grows with every write). A store opened read-only on a
// full file system gets the removals only (index_untouched says so).
std::expected<GcReport, Error> collect_garbage(Store& store, const GcOptions& options, std::ostream& progress);

struct RebuildReport {
  std::uint64_t blobs = 0;           // looked at
  std::vector<IndexEntry> sets;      // the rows written, newest first
  std::vector<std::string> skipped;  // one sentence per manifest left out: which, and why
  std::uint64_t unknown_modes = 0;   // files recorded as 0644 for want of a record of their mode
  std::filesystem::path old_index;   // where the index it replaced went; empty when there was none
};

// Makes a new index for the store at `root` from what its blobs hold, in
// place of the one there (missing, damaged, of another version, or sound:
// it is moved to quarantine.v1/ either way). Every blob that parses as a
// manifest (and hashes to its name) becomes a row when every file and log it
// names is stored; its signature is the stored signature document that signs
// it (one a trusted key verifies, if any), and the row is verified when that
// signature verifies: what fetch and push look for. A file's mode comes from
// a stored pack that holds exactly the set's files (older stores kept one),
// else it is 0644 and counted in unknown_modes. Holds the store lock
// exclusively; never call it while this process holds a Pin.
std::expected<RebuildReport, Error> rebuild_index(const std::filesystem::path& root, const TrustedKeys& trusted,
                                                  std::ostream& progress);

}  // namespace orc::cache
