#pragma once
// Keeping the store healthy: `orchestrate cache verify` and `cache gc` as
// library functions. Both hold the store lock exclusively (util::FileLock on
// Store::lock_file()), so they wait for writers holding a Pin and writers
// wait for them; never call them while this process holds a Pin.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/store.hpp"

namespace orc::cache {

struct QuarantinedBlob {
  std::string digest;                // the name it was stored under
  std::string actual;                // what its bytes hash to now
  std::filesystem::path moved_to;    // in quarantine.v1/
  std::vector<std::string> dropped;  // manifests of the index rows that named it
};

struct VerifyReport {
  std::uint64_t blobs = 0;  // re-hashed
  std::uint64_t bytes = 0;
  std::vector<QuarantinedBlob> corrupt;
  std::vector<std::string> missing;  // named by an index row, not stored; rows dropped
};

// Re-hashes every blob; moves each that does not match its name (or is not
// named like a blob) to quarantine.v1/ and drops the index rows that name it
// or name a blob that is missing. `progress` hears about waits for the lock.
std::expected<VerifyReport, Error> verify_store(Store& store, std::ostream& progress);

struct GcOptions {
  // Keep this many newest artifact sets per recipe x tier; nullopt keeps all
  // and only collects what no set names.
  std::optional<std::size_t> keep;
};

struct GcReport {
  std::vector<std::string> removed_sets;  // manifest digests
  std::uint64_t removed_blobs = 0;
  std::uint64_t removed_bytes = 0;
  std::uint64_t removed_temps = 0;
};

// Prunes old sets (with `keep`), then removes every blob no set names and
// every temporary in tmp/ (with the lock held exclusively no writer is
// mid-write, so each one is left over from a crash).
std::expected<GcReport, Error> collect_garbage(Store& store, const GcOptions& options, std::ostream& progress);

}  // namespace orc::cache
