#pragma once
// The local store: content-addressed blobs and the SQLite index of the
// artifact sets built from them. Layout under the root, each part versioned
// in its name so later formats can sit beside it:
//
//   blobs.v1/sha256/ab/abcdef...   artifact files, packs, build logs, manifests,
//                                  signature documents (same layout as app/store)
//   index.v1.sqlite                the index (index.hpp)
//   quarantine.v1/                 blobs `verify` found corrupt, and indexes a
//                                  rebuild replaced (*.old), kept for a look
//   locks.v1/store.lock            shared by writers, exclusive for gc and verify
//   tmp/                           files on their way in; *.tmp left by a crash
//
// A blob is written to tmp/ while it is hashed, fsynced, and moved into place
// without replacing an existing one, so a reader sees a whole blob or none and
// a blob already present is never rewritten. Writers hold the store lock
// shared (Pin) from their first blob to the index row that names them; gc
// holds it exclusively, so it never collects a blob whose row is on its way
// and every *.tmp it sees is garbage.
//
// The index is the only thing that says which blobs are wanted, so a store
// that holds blobs is never given a new, empty index: open() refuses it
// while the index is missing, damaged or of another version, and
// open_for_rebuild() + install_index() (rebuild_index, maintenance.hpp) make
// a new one from the manifests among the blobs. A process that opened the
// store before an index was installed finds the new one at its next pin().
//
// A store on a read-only file system, or on a full one, can still be read:
// open(StoreAccess::read) then opens the index without writing a byte
// (IndexAccess::read_only), and every write is refused with the reason.
// Errors of a full or read-only file system say so, where, and what to do
// (explain(), store_fs.cpp).
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/index.hpp"
#include "orchestrator/digest/digest.hpp"

namespace orc::cache {

bool is_sha256_hex(std::string_view hex);

struct StoredBlob {
  std::filesystem::path path;
  std::string name;  // the file's name: the digest it was stored under
  std::uint64_t size = 0;
};

struct PutResult {
  digest::Digest digest;
  std::uint64_t size = 0;
  bool added = false;  // false when the blob was already there
};

enum class StoreAccess {
  write,  // an error when the file system is read-only or full
  read,   // as write where it can be; read-only where the file system is read-only or full
};

class Store {
 public:
  // Creates the layout when missing and opens the index; an index is created
  // only while the store holds no blob (Index::open's refusals, else). With
  // StoreAccess::read a store whose file system is read-only or full opens
  // read-only instead (read_only()).
  static std::expected<Store, Error> open(std::filesystem::path root, StoreAccess access = StoreAccess::write);
  // The store with a new, empty index of its own in tmp/, whatever state the
  // one in place is in: for rebuilding it, then install_index().
  static std::expected<Store, Error> open_for_rebuild(std::filesystem::path root);

  const std::filesystem::path& root() const { return m_root; }
  // Where a store at `root` keeps its temporaries and its lock, for what
  // runs before (or without) opening it.
  static std::filesystem::path tmp_dir_of(const std::filesystem::path& root) { return root / "tmp"; }
  static std::filesystem::path lock_file_of(const std::filesystem::path& root) {
    return root / "locks.v1" / "store.lock";
  }
  std::filesystem::path tmp_dir() const { return tmp_dir_of(m_root); }
  std::filesystem::path blobs_dir() const { return m_root / "blobs.v1" / "sha256"; }
  std::filesystem::path quarantine_dir() const { return m_root / "quarantine.v1"; }
  std::filesystem::path lock_file() const { return lock_file_of(m_root); }
  std::filesystem::path index_file() const { return m_root / "index.v1.sqlite"; }

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

  std::filesystem::path blob_path(const digest::Digest& digest) const;
  bool has_blob(const digest::Digest& digest) const;
  // The same for a file's digest, which manifests and index rows still hold
  // as hex: an ill-formed one is no blob (has_blob false, read_blob invalid).
  std::filesystem::path blob_path(std::string_view hex) const;
  bool has_blob(std::string_view hex) const;
  // Copies `file` in, hashing it on the way.
  std::expected<PutResult, Error> put_file(const std::filesystem::path& file);
  std::expected<PutResult, Error> put_bytes(std::string_view bytes);
  // The blob's bytes, re-hashed: corrupt when they no longer match the name,
  // not_found when it is not stored. For manifests and signatures, not GBs.
  std::expected<std::string, Error> read_blob(const digest::Digest& digest) const;
  std::expected<std::string, Error> read_blob(std::string_view hex) const;

  // Every file under blobs.v1/ (well named or not), in no particular order.
  std::expected<std::vector<StoredBlob>, Error> list_blobs() const;

  // not_found naming the first blob the set names (manifest, files, log,
  // signature, pack) that is not stored.
  std::expected<void, Error> check_blobs(const IndexEntry& entry) const;
  // Adds the set to the index after check_blobs(); a build log the store
  // does not hold (a set pulled from a registry) is left out of the row.
  std::expected<std::int64_t, Error> record(const IndexEntry& entry);

  // For a store from open_for_rebuild(): closes its index and puts it in
  // place of index.v1.sqlite, after moving that one (with its -wal and -shm)
  // to quarantine.v1/; returns where it went, empty when there was none.
  // Hold the store lock exclusively. On an error the store is unusable.
  std::expected<std::filesystem::path, Error> install_index();

  Index& index() { return m_index; }
  const Index& index() const { return m_index; }

  // Opened read-only (StoreAccess::read): why, the error that refused
  // writing (is_full() or is_read_only() of it); null when writable.
  const Error* read_only() const { return m_read_only ? &*m_read_only : nullptr; }
  // The error, worded for this store when a full or read-only file system
  // caused it (where, how much is free, what to do); else as it was.
  Error explain(Error error) const;

 private:
  Store(std::filesystem::path root, std::filesystem::path index_path, Index index, std::shared_ptr<Pin::State> lock);
  static std::expected<Store, Error> open_writable(std::filesystem::path root);
  static std::expected<Store, Error> open_read_only(std::filesystem::path root, Error cause);
  // Creates the layout when missing and opens the lock file.
  static std::expected<std::shared_ptr<Pin::State>, Error> make_layout(const std::filesystem::path& root);
  // An error when the store was opened read-only: `what` cannot be done.
  std::optional<Error> refuse_write(std::string_view what) const;
  std::expected<void, Error> follow_installed_index();
  std::filesystem::path m_root;
  std::filesystem::path m_index_path;  // index_file(), or the new one of open_for_rebuild()
  Index m_index;
  std::uint64_t m_index_inode = 0;  // of m_index_path when it was opened
  std::shared_ptr<Pin::State> m_lock;
  std::optional<Error> m_read_only;
};

// explain() for a store at `root` (its file system's free space read now).
Error explain_store_error(const std::filesystem::path& root, Error error);
// "<root> has 12.0 KiB free of 50.0 MiB", read now; `root` alone when statvfs cannot say.
std::string free_space_of(const std::filesystem::path& root);

}  // namespace orc::cache
