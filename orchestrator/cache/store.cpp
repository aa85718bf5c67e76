#include "orchestrator/cache/store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/inspect/sha256.hpp"

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
  if (m_state && --m_state->pins == 0) ::flock(m_state->fd, LOCK_UN);
}

bool is_sha256_hex(std::string_view hex) {
  return hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

Store::Store(fs::path root, Index index, std::shared_ptr<Pin::State> lock)
    : m_root(std::move(root)), m_index(std::move(index)), m_lock(std::move(lock)) {}

std::expected<Store, Error> Store::open(fs::path root) {
  std::error_code ec;
  for (const fs::path& dir : {root / "blobs.v1" / "sha256", root / "tmp", root / "locks.v1"}) {
    fs::create_directories(dir, ec);
    if (ec) return std::unexpected(io_error("creating " + dir.string() + ": " + ec.message()));
  }
  auto lock = std::make_shared<Pin::State>();
  const fs::path lock_path = root / "locks.v1" / "store.lock";
  lock->fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock->fd < 0) return std::unexpected(io_error(errno_message("opening", lock_path)));
  auto index = Index::open(root / "index.v1.sqlite");
  if (!index) return std::unexpected(index.error());
  return Store(std::move(root), std::move(*index), std::move(lock));
}

std::expected<Store::Pin, Error> Store::pin() {
  if (m_lock->pins == 0) {
    int rc;
    while ((rc = ::flock(m_lock->fd, LOCK_SH)) != 0 && errno == EINTR) {
    }
    if (rc != 0) return std::unexpected(io_error(errno_message("locking", lock_file())));
  }
  ++m_lock->pins;
  return Pin(m_lock);
}

fs::path Store::blob_path(std::string_view hex) const {
  return blobs_dir() / std::string(hex.substr(0, 2)) / std::string(hex);
}

bool Store::has_blob(std::string_view hex) const {
  std::error_code ec;
  return is_sha256_hex(hex) && fs::is_regular_file(blob_path(hex), ec);
}

namespace {

// Copies `in` to `out`, hashing every byte on the way; returns the size.
std::expected<std::uint64_t, Error> copy_hashing(int in, int out, inspect::Sha256& hasher, const fs::path& from,
                                                 const fs::path& to) {
  std::uint64_t size = 0;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(io_error(errno_message("reading", from)));
    if (n == 0) return size;
    hasher.update(std::as_bytes(std::span(buffer.data(), static_cast<std::size_t>(n))));
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out, buffer.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return std::unexpected(io_error(errno_message("writing", to)));
      done += w;
    }
    size += static_cast<std::uint64_t>(n);
  }
}

}  // namespace

std::expected<PutResult, Error> Store::put_file(const fs::path& file) {
  auto held = pin();
  if (!held) return std::unexpected(held.error());
  const int in = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return std::unexpected(Error{ErrorKind::not_found, errno_message("opening", file)});
  const fs::path temp = temp_name(tmp_dir(), "blob");
  const int out = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    ::close(in);
    return std::unexpected(io_error(errno_message("creating", temp)));
  }
  inspect::Sha256 hasher;
  auto size = copy_hashing(in, out, hasher, file, temp);
  ::close(in);
  if (size && ::fsync(out) != 0) size = std::unexpected(io_error(errno_message("syncing", temp)));
  ::close(out);
  std::error_code ec;
  if (!size) {
    fs::remove(temp, ec);
    return std::unexpected(size.error());
  }
  PutResult result{.hex = hasher.hex_digest(), .size = *size, .added = false};
  if (has_blob(result.hex)) {
    fs::remove(temp, ec);
    return result;
  }
  auto moved = commit_no_replace(temp, blob_path(result.hex));
  if (!moved) return std::unexpected(moved.error());
  result.added = *moved;
  return result;
}

std::expected<PutResult, Error> Store::put_bytes(std::string_view bytes) {
  auto held = pin();
  if (!held) return std::unexpected(held.error());
  PutResult result{.hex = inspect::sha256_hex(std::as_bytes(std::span(bytes.data(), bytes.size()))),
                   .size = bytes.size(),
                   .added = false};
  if (has_blob(result.hex)) return result;
  auto written = write_file_atomic(blob_path(result.hex), bytes, tmp_dir(), 0644, Replace::refuse);
  // Refused means another writer got there first with the same bytes.
  if (!written && written.error().kind != ErrorKind::invalid) return std::unexpected(written.error());
  result.added = written.has_value();
  return result;
}

std::expected<std::string, Error> Store::read_blob(std::string_view hex) const {
  if (!is_sha256_hex(hex)) return std::unexpected(invalid_error("not a sha256 digest: " + std::string(hex)));
  auto bytes = read_file(blob_path(hex));
  if (!bytes)
    return std::unexpected(Error{ErrorKind::not_found, "blob sha256:" + std::string(hex) + " is not in the store"});
  if (inspect::sha256_hex(std::as_bytes(std::span(bytes->data(), bytes->size()))) != hex)
    return std::unexpected(
        Error{ErrorKind::corrupt,
              "blob sha256:" + std::string(hex) + " does not match its digest (run 'orchestrate cache verify')"});
  return bytes;
}

std::expected<std::int64_t, Error> Store::record(const IndexEntry& entry) {
  auto held = pin();
  if (!held) return std::unexpected(held.error());
  std::vector<std::string> named{entry.manifest};
  for (const std::string* hex : {&entry.build_log, &entry.signature, &entry.pack})
    if (!hex->empty()) named.push_back(*hex);
  for (const auto& f : entry.files) named.push_back(f.sha256);
  for (const auto& hex : named)
    if (!has_blob(hex))
      return std::unexpected(Error{ErrorKind::not_found, "recording " + entry.recipe + " for " + entry.tier +
                                                             ": blob sha256:" + hex + " is not stored"});
  return m_index.add(entry);
}

}  // namespace orc::cache
