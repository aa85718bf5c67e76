#pragma once
// The local store: content-addressed blobs and the SQLite index of the
// artifact sets built from them. Layout under the root, each part versioned
// in its name so later formats can sit beside it:
//
//   blobs.v1/sha256/ab/abcdef...   artifact files, packs, build logs, manifests,
//                                  signature documents (same layout as app/store)
//   index.v1.sqlite                the index (index.hpp)
//   quarantine.v1/                 blobs `verify` found corrupt, kept for a look
//   locks.v1/store.lock            shared by writers, exclusive for gc and verify
//   tmp/                           files on their way in; *.tmp left by a crash
//
// A blob is written to tmp/ while it is hashed, fsynced, and moved into place
// without replacing an existing one, so a reader sees a whole blob or none and
// a blob already present is never rewritten. Writers hold the store lock
// shared (Pin) from their first blob to the index row that names them; gc
// holds it exclusively, so it never collects a blob whose row is on its way
// and every *.tmp it sees is garbage.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/index.hpp"

namespace orc::cache {

bool is_sha256_hex(std::string_view hex);

struct PutResult {
  std::string hex;
  std::uint64_t size = 0;
  bool added = false;  // false when the blob was already there
};

class Store {
 public:
  // Creates the layout when missing and opens the index.
  static std::expected<Store, Error> open(std::filesystem::path root);

  const std::filesystem::path& root() const { return m_root; }
  std::filesystem::path tmp_dir() const { return m_root / "tmp"; }
  std::filesystem::path blobs_dir() const { return m_root / "blobs.v1" / "sha256"; }
  std::filesystem::path quarantine_dir() const { return m_root / "quarantine.v1"; }
  std::filesystem::path lock_file() const { return m_root / "locks.v1" / "store.lock"; }

  // Holds the store lock shared while it lives; nests. Blobs put while a Pin
  // lives survive gc until the index row naming them is added. Never take
  // util::FileLock on lock_file() in a process that holds a Pin: it would wait
  // for itself.
  class Pin {
   public:
    Pin(Pin&&) noexcept;
    Pin& operator=(Pin&&) = delete;
    ~Pin();

   private:
    friend class Store;
    struct State;
    explicit Pin(std::shared_ptr<State> state);
    std::shared_ptr<State> m_state;
  };
  std::expected<Pin, Error> pin();

  std::filesystem::path blob_path(std::string_view hex) const;
  bool has_blob(std::string_view hex) const;
  // Copies `file` in, hashing it on the way.
  std::expected<PutResult, Error> put_file(const std::filesystem::path& file);
  std::expected<PutResult, Error> put_bytes(std::string_view bytes);
  // The blob's bytes, re-hashed: corrupt when they no longer match the name,
  // not_found when it is not stored. For manifests and signatures, not GBs.
  std::expected<std::string, Error> read_blob(std::string_view hex) const;

  // Adds the set to the index after checking that every blob it names
  // (manifest, files, log, signature, pack) is stored.
  std::expected<std::int64_t, Error> record(const IndexEntry& entry);

  Index& index() { return m_index; }
  const Index& index() const { return m_index; }

 private:
  Store(std::filesystem::path root, Index index, std::shared_ptr<Pin::State> lock);
  std::filesystem::path m_root;
  Index m_index;
  std::shared_ptr<Pin::State> m_lock;
};

}  // namespace orc::cache
