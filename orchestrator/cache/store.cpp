#include "orchestrator/cache/store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/write.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

// The lock file's descriptor and how many Pins share it: flock belongs to the
// open file description, so the first Pin locks and the last unlocks.
struct Store::Pin::State {
  int fd = -1;
  int pins = 0;
  ~State() {
    if (fd >= 0) ::close(fd);
  }
};

Store::Pin::Pin(std::shared_ptr<State> state) : m_state(std::move(state)) {}
Store::Pin::Pin(Pin&& other) noexcept : m_state(std::move(other.m_state)) {}
Store::Pin::~Pin() {
  if (m_state && --m_state->pins == 0 && m_state->fd >= 0) ::flock(m_state->fd, LOCK_UN);
}

bool is_sha256_hex(std::string_view hex) {
  return hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

Store::Store(fs::path root, fs::path index_path, Index index, std::shared_ptr<Pin::State> lock)
    : m_root(std::move(root)), m_index_path(std::move(index_path)), m_index(std::move(index)), m_lock(std::move(lock)) {
  struct stat st {};
  if (::stat(m_index_path.c_str(), &st) == 0) m_index_inode = st.st_ino;
}

std::expected<std::shared_ptr<Store::Pin::State>, Error> Store::make_layout(const fs::path& root) {
  std::error_code ec;
  for (const fs::path& dir : {root / "blobs.v1" / "sha256", tmp_dir_of(root), lock_file_of(root).parent_path()}) {
    fs::create_directories(dir, ec);
    if (ec) return std::unexpected(io_error("creating " + dir.string() + ": " + ec.message(), ec.value()));
  }
  auto lock = std::make_shared<Pin::State>();
  const fs::path lock_path = lock_file_of(root);
  lock->fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock->fd < 0) return std::unexpected(errno_error("opening", lock_path));
  return lock;
}

namespace {

// Whether any file sits in the blob fan-out directories; stops at the first.
bool holds_blobs(const fs::path& blobs_dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(blobs_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (!it->is_directory(ec)) return true;
  return false;
}

}  // namespace

std::expected<Store, Error> Store::open(fs::path root, StoreAccess access) {
  auto opened = open_writable(root);
  if (opened) return opened;
  Error cause = explain_store_error(root, std::move(opened.error()));
  if (access == StoreAccess::write || !(is_full(cause) || is_read_only(cause)))
    return std::unexpected(std::move(cause));
  return open_read_only(std::move(root), std::move(cause));
}

std::expected<Store, Error> Store::open_read_only(fs::path root, Error cause) {
  const fs::path file = root / "index.v1.sqlite";
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return std::unexpected(std::move(cause));
  auto index = Index::open(file, IfNoIndex::refuse, IndexAccess::read_only);
  // A damaged index is said as such; any other failure is the file system's.
  if (!index && index.error().kind == ErrorKind::invalid) return std::unexpected(index.error());
  if (!index)
    return std::unexpected(Error{
        ErrorKind::io, cause.message + "; reading it read-only failed too: " + index.error().message, cause.os_error});
  // Readers pin too (fetch): flock needs no write access, so the lock file,
  // when there is one, still excludes gc running where the store is writable.
  auto lock = std::make_shared<Pin::State>();
  lock->fd = ::open(lock_file_of(root).c_str(), O_RDONLY | O_CLOEXEC);
  Store store(std::move(root), file, std::move(*index), std::move(lock));
  store.m_read_only = std::move(cause);
  return store;
}

std::expected<Store, Error> Store::open_writable(fs::path root) {
  auto lock = make_layout(root);
  if (!lock) return std::unexpected(lock.error());
  const fs::path file = root / "index.v1.sqlite";
  const IfNoIndex if_none = holds_blobs(root / "blobs.v1" / "sha256") ? IfNoIndex::refuse : IfNoIndex::create;
  auto index = Index::open(file, if_none);
  if (!index) return std::unexpected(index.error());
  return Store(std::move(root), file, std::move(*index), std::move(*lock));
}

std::expected<Store, Error> Store::open_for_rebuild(fs::path root) {
  auto lock = make_layout(root);
  if (!lock) return std::unexpected(explain_store_error(root, lock.error()));
  // A directory named like every temporary (gc removes it after a crash),
  // for the new index and the -wal and -shm files SQLite keeps beside it.
  const fs::path dir = temp_name(tmp_dir_of(root), "index-rebuild");
  std::error_code ec;
  if (!fs::create_directory(dir, ec))
    return std::unexpected(
        explain_store_error(root, io_error("creating " + dir.string() + ": " + ec.message(), ec.value())));
  const fs::path file = dir / "index.v1.sqlite";
  auto index = Index::open(file, IfNoIndex::create);
  if (!index) return std::unexpected(explain_store_error(root, index.error()));
  return Store(std::move(root), file, std::move(*index), std::move(*lock));
}

std::expected<fs::path, Error> Store::install_index() {
  const fs::path built = m_index_path;
  if (built == index_file())
    return std::unexpected(invalid_error("install_index: this store was not opened to rebuild"));
  if (auto refused = refuse_write("install a new index")) return std::unexpected(*refused);
  { const Index closing = std::move(m_index); }  // the last connection: SQLite folds the -wal into the file
  // The old -wal must never meet the new file, even without its own (it was
  // deleted): SQLite would replay its pages there.
  std::error_code ec;
  fs::path kept;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const fs::path from = index_file().string() + suffix;
    if (!fs::exists(fs::symlink_status(from, ec))) continue;
    if (kept.empty()) {
      fs::create_directories(quarantine_dir(), ec);
      kept = temp_name(quarantine_dir(), "index.v1.sqlite").replace_extension(".old");
    }
    if (::rename(from.c_str(), (kept.string() + suffix).c_str()) != 0)
      return std::unexpected(io_error(errno_message("moving to quarantine", from)));
  }
  if (::rename(built.c_str(), index_file().c_str()) != 0)
    return std::unexpected(io_error(errno_message("installing the new index", built)));
  fsync_dir(m_root);
  fs::remove_all(built.parent_path(), ec);
  auto reopened = Index::open(index_file(), IfNoIndex::refuse);
  if (!reopened) return std::unexpected(reopened.error());
  m_index = std::move(*reopened);
  m_index_path = index_file();
  struct stat st {};
  if (::stat(m_index_path.c_str(), &st) == 0) m_index_inode = st.st_ino;
  return kept;
}

// A rebuild (holding the lock exclusively) may have installed a new index
// since this store opened its own; rows written to the old one would be lost.
std::expected<void, Error> Store::follow_installed_index() {
  struct stat st {};
  if (::stat(m_index_path.c_str(), &st) == 0 && st.st_ino == m_index_inode) return {};
  auto reopened =
      Index::open(m_index_path, IfNoIndex::refuse, m_read_only ? IndexAccess::read_only : IndexAccess::read_write);
  if (!reopened) return std::unexpected(reopened.error());
  m_index = std::move(*reopened);
  m_index_inode = st.st_ino;
  return {};
}

std::expected<Store::Pin, Error> Store::pin() {
  if (m_lock->pins == 0 && m_lock->fd >= 0) {
    int rc;
    while ((rc = ::flock(m_lock->fd, LOCK_SH)) != 0 && errno == EINTR) {
    }
    if (rc != 0) return std::unexpected(io_error(errno_message("locking", lock_file())));
    if (auto followed = follow_installed_index(); !followed) {
      ::flock(m_lock->fd, LOCK_UN);
      return std::unexpected(followed.error());
    }
  }
  ++m_lock->pins;
  return Pin(m_lock);
}

fs::path Store::blob_path(const digest::Digest& digest) const { return blob_path(digest.hex()); }

bool Store::has_blob(const digest::Digest& digest) const { return has_blob(digest.hex()); }

fs::path Store::blob_path(std::string_view hex) const {
  return blobs_dir() / std::string(hex.substr(0, 2)) / std::string(hex);
}

bool Store::has_blob(std::string_view hex) const {
  std::error_code ec;
  return is_sha256_hex(hex) && fs::is_regular_file(blob_path(hex), ec);
}

namespace {

// Copies `in` to `out`, hashing every byte on the way; returns the size.
std::expected<std::uint64_t, Error> copy_hashing(int in, int out, digest::Sha256& hasher, const fs::path& from,
                                                 const fs::path& to) {
  std::uint64_t size = 0;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(errno_error("reading", from));
    if (n == 0) return size;
    hasher.update(std::as_bytes(std::span(buffer.data(), static_cast<std::size_t>(n))));
    if (!util::write_all(out, std::string_view(buffer.data(), static_cast<std::size_t>(n))))
      return std::unexpected(errno_error("writing", to));
    size += static_cast<std::uint64_t>(n);
  }
}

}  // namespace

std::expected<PutResult, Error> Store::put_file(const fs::path& file) {
  if (auto refused = refuse_write("store " + file.string())) return std::unexpected(*refused);
  auto held = pin();
  if (!held) return std::unexpected(held.error());
  const int in = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return std::unexpected(Error{ErrorKind::not_found, errno_message("opening", file)});
  const fs::path temp = temp_name(tmp_dir(), "blob");
  const int out = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    const Error failed = errno_error("creating", temp);
    ::close(in);
    return std::unexpected(explain(failed));
  }
  digest::Sha256 hasher;
  auto size = copy_hashing(in, out, hasher, file, temp);
  ::close(in);
  if (size && ::fsync(out) != 0) size = std::unexpected(errno_error("syncing", temp));
  ::close(out);
  std::error_code ec;
  if (!size) {
    fs::remove(temp, ec);
    return std::unexpected(explain(size.error()));
  }
  PutResult result{.digest = hasher.digest(), .size = *size, .added = false};
  if (has_blob(result.digest)) {
    fs::remove(temp, ec);
    return result;
  }
  auto moved = commit_no_replace(temp, blob_path(result.digest));
  if (!moved) return std::unexpected(explain(moved.error()));
  result.added = *moved;
  return result;
}

std::expected<PutResult, Error> Store::put_bytes(std::string_view bytes) {
  if (auto refused = refuse_write("store a blob")) return std::unexpected(*refused);
  auto held = pin();
  if (!held) return std::unexpected(held.error());
  PutResult result{.digest = digest::sha256(std::as_bytes(std::span(bytes.data(), bytes.size()))),
                   .size = bytes.size(),
                   .added = false};
  if (has_blob(result.digest)) return result;
  auto written = write_file_atomic(blob_path(result.digest), bytes, tmp_dir(), 0644, Replace::refuse);
  // Refused means another writer got there first with the same bytes.
  if (!written && written.error().kind != ErrorKind::invalid) return std::unexpected(explain(written.error()));
  result.added = written.has_value();
  return result;
}

std::expected<std::string, Error> Store::read_blob(std::string_view hex) const {
  const auto digest = digest::Digest::from_hex(hex);
  if (!digest) return std::unexpected(invalid_error("not a sha256 digest: " + std::string(hex)));
  return read_blob(*digest);
}

std::expected<std::string, Error> Store::read_blob(const digest::Digest& digest) const {
  auto bytes = read_file(blob_path(digest));
  if (!bytes)
    return std::unexpected(Error{ErrorKind::not_found, "blob " + digest.to_string() + " is not in the store"});
  if (digest::sha256(std::as_bytes(std::span(bytes->data(), bytes->size()))) != digest)
    return std::unexpected(
        Error{ErrorKind::corrupt,
              "blob " + digest.to_string() + " does not match its digest (run 'orchestrate cache verify')"});
  return bytes;
}

std::expected<std::vector<StoredBlob>, Error> Store::list_blobs() const {
  std::vector<StoredBlob> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(blobs_dir(), ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    out.push_back({it->path(), it->path().filename().string(), it->file_size(ec)});
  }
  if (ec) return std::unexpected(io_error("listing " + blobs_dir().string() + ": " + ec.message()));
  return out;
}

std::expected<void, Error> Store::check_blobs(const IndexEntry& entry) const {
  std::vector<std::string> named{entry.manifest.hex()};
  for (const auto* digest : {&entry.build_log, &entry.signature, &entry.pack})
    if (*digest) named.push_back((*digest)->hex());
  for (const auto& f : entry.files) named.push_back(f.sha256);
  for (const auto& hex : named)
    if (!has_blob(hex))
      return std::unexpected(Error{ErrorKind::not_found, "recording " + entry.recipe + " for " + entry.tier +
                                                             ": blob sha256:" + hex + " is not stored"});
  return {};
}

std::expected<std::int64_t, Error> Store::record(const IndexEntry& entry) {
  if (auto refused = refuse_write("record " + entry.recipe + " for " + entry.tier)) return std::unexpected(*refused);
  auto held = pin();
  if (!held) return std::unexpected(held.error());
  // The build log stays where the set was built (a registry carries the
  // files, manifest and signature): a set pulled, or attested after a pull,
  // names a log this store may not hold, and its row then does not claim it.
  IndexEntry row = entry;
  if (row.build_log && !has_blob(*row.build_log)) row.build_log.reset();
  if (auto stored = check_blobs(row); !stored) return std::unexpected(stored.error());
  auto added = m_index.add(row);
  if (!added) return std::unexpected(explain(added.error()));
  return added;
}

}  // namespace orc::cache
