// Unpacker::file: one regular file of the archive, streamed into every tree,
// hashed or checked against its signed chunks on the way.
#include <archive.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "orchestrator/cache/chunks.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/unpacker.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/write.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t k_writeback_bytes = 16 << 20;
// Files this large have their steps (hash, one write per tree) run side by
// side on threads of their own; smaller ones are done inline.
constexpr std::uint64_t k_fanout_bytes = 8 << 20;

// Turns O_DIRECT on or off for an open file; false where it cannot be.
bool set_direct(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) == 0;
}

}  // namespace

// One regular file written into every tree. The steps every block goes
// through: hashing (or checking chunk by chunk against the signed manifest),
// and writing into each tree (the first one handed to the disk as it is
// written when synced, so the fsync at the end waits for the last few MiB,
// not the whole file). A large file runs them on threads of their own, side
// by side; the destructor waits for them before the files are closed.
class Unpacker::FileWriter {
 public:
  FileWriter(Unpacker& unpacker, const fs::path& rel, const std::string& name, std::int64_t declared_size)
      : m_u(unpacker), m_rel(rel), m_name(name), m_declared(declared_size) {}
  ~FileWriter() {
    join();
    for (const int fd : m_fds)
      if (fd >= 0) ::close(fd);
  }
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  std::expected<void, Error> open();
  std::expected<void, Error> copy(archive* in);
  std::expected<UnpackedFile, Error> close(mode_t perm);

 private:
  enum class Direct { done, fallback, failed };
  void plan_steps();
  bool write_step(std::size_t t, std::span<const std::byte> bytes);
  Direct write_direct(std::span<const std::byte>& bytes);
  std::expected<void, Error> put(std::span<const std::byte> bytes);
  const std::vector<bool>& join() {
    if (m_fan_out && !m_joined) {
      m_steps_ok = m_u.m_fanout.end();
      m_joined = true;
    }
    return m_steps_ok;
  }
  Error write_error();
  Error step_error();

  Unpacker& m_u;
  const fs::path& m_rel;
  const std::string& m_name;
  std::int64_t m_declared;
  std::vector<int> m_fds;
  digest::Sha256 m_hasher;
  const ManifestFile* m_signed = nullptr;
  std::optional<ChunkCheck> m_chunks;
  std::vector<std::uint64_t> m_written;
  std::vector<int> m_write_errno;  // each tree's, set on its step's thread
  std::uint64_t m_flushed = 0;     // of the first tree's file, handed to the disk
  std::uint64_t m_size = 0;
  std::vector<BlockFanout::Step> m_steps;
  std::vector<bool> m_steps_ok;
  bool m_fan_out = false;
  bool m_joined = false;
  bool m_direct = false;
};

std::expected<void, Error> Unpacker::FileWriter::open() {
  for (const auto& root : m_u.m_roots) {
    const fs::path at = root / m_rel;
    m_fds.push_back(::open(at.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (m_fds.back() < 0) return std::unexpected(io_error(errno_message("creating", at)));
  }
  m_written.assign(m_fds.size(), 0);
  m_write_errno.assign(m_fds.size(), 0);
  const UnpackOptions& options = m_u.m_options;
  // Looked up by the name admit() saw ("./x" is "x"), not the archive's spelling.
  m_signed = options.hash && options.signed_file ? options.signed_file(m_rel.generic_string()) : nullptr;
  if (m_signed && m_signed->chunks.size != 0)
    m_chunks.emplace(m_signed->chunks, m_signed->size, ChunkCheck::lanes_for(m_signed->chunks.sha256.size()));
  plan_steps();
  return {};
}

void Unpacker::FileWriter::plan_steps() {
  const UnpackOptions& options = m_u.m_options;
  if (m_chunks) {
    for (std::size_t i = 0; i < m_chunks->lanes(); ++i) m_steps.push_back(m_chunks->lane(i));
  } else if (options.hash) {
    m_steps.push_back([this](std::span<const std::byte> bytes) {
      m_hasher.update(bytes);
      return true;
    });
  }
  m_fan_out = m_declared >= static_cast<std::int64_t>(k_fanout_bytes) && (options.hash || m_fds.size() > 1);
  // A large file for the store goes to the disk without the page cache
  // (O_DIRECT: the block is DMAed from the ring, no copy, no writeback
  // later), falling back to buffered writes where the file system refuses
  // it and for the file's last, partial block.
  m_direct = m_fan_out && options.sync && set_direct(m_fds[0], true);
  for (std::size_t t = 0; t < m_fds.size(); ++t)
    m_steps.push_back([this, t](std::span<const std::byte> bytes) { return write_step(t, bytes); });
  m_steps_ok.assign(m_steps.size(), true);
  if (m_fan_out) m_u.m_fanout.begin(m_steps);
}

Unpacker::FileWriter::Direct Unpacker::FileWriter::write_direct(std::span<const std::byte>& bytes) {
  const bool aligned = bytes.size() % BlockFanout::k_alignment == 0 &&
                       reinterpret_cast<std::uintptr_t>(bytes.data()) % BlockFanout::k_alignment == 0;
  if (aligned) {
    ssize_t w;
    do {
      w = ::write(m_fds[0], bytes.data(), bytes.size());
    } while (w < 0 && errno == EINTR);
    if (w == static_cast<ssize_t>(bytes.size())) {
      m_written[0] += bytes.size();
      return Direct::done;
    }
    if (w > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(w));
    } else if (w < 0 && errno != EINVAL) {
      m_write_errno[0] = errno;
      return Direct::failed;
    }
    m_written[0] += w > 0 ? static_cast<std::uint64_t>(w) : 0;
  }
  m_direct = false;
  if (!set_direct(m_fds[0], false)) {
    m_write_errno[0] = errno;
    return Direct::failed;
  }
  return Direct::fallback;
}

bool Unpacker::FileWriter::write_step(std::size_t t, std::span<const std::byte> bytes) {
  if (t == 0 && m_direct)
    if (const Direct d = write_direct(bytes); d != Direct::fallback) return d == Direct::done;
  if (!util::write_all(m_fds[t], bytes)) {
    m_write_errno[t] = errno;
    return false;
  }
  m_written[t] += bytes.size();
  if (t == 0 && m_u.m_options.sync && m_written[t] - m_flushed >= k_writeback_bytes) {
    ::sync_file_range(m_fds[t], static_cast<off_t>(m_flushed), static_cast<off_t>(m_written[t] - m_flushed),
                      SYNC_FILE_RANGE_WRITE);
    m_flushed = m_written[t];
  }
  return true;
}

// The first tree whose write failed, with its step's errno (the steps of a
// large file run on other threads: errno here is not theirs).
Error Unpacker::FileWriter::write_error() {
  join();
  for (std::size_t t = 0; t < m_fds.size(); ++t)
    if (m_write_errno[t] != 0)
      return io_error("writing " + (m_u.m_roots[t] / m_rel).string() + ": " + std::strerror(m_write_errno[t]));
  return io_error("writing " + (m_u.m_roots.back() / m_rel).string() + " failed");
}

// A step failed: a chunk that does not match (a refusal), else a write (a
// full disk is not the registry's fault).
Error Unpacker::FileWriter::step_error() {
  join();
  if (m_chunks)
    if (std::string mismatch = m_chunks->mismatch(); !mismatch.empty()) return refusal(m_name, mismatch);
  return write_error();
}

std::expected<void, Error> Unpacker::FileWriter::put(std::span<const std::byte> bytes) {
  m_u.m_total += bytes.size();
  if (m_u.m_options.max_bytes && m_u.m_total > m_u.m_options.max_bytes)
    return std::unexpected(
        refusal(m_name, "the files hold more than the " + std::to_string(m_u.m_options.max_bytes) + " bytes expected"));
  m_size += bytes.size();
  if (m_fan_out) {
    if (m_u.m_fanout.failed()) return std::unexpected(step_error());  // stop early: it cannot succeed now
    m_u.m_fanout.put(bytes);
    return {};
  }
  for (std::size_t i = 0; i < m_steps.size(); ++i)
    if (!m_steps[i](bytes)) return std::unexpected(step_error());
  return {};
}

std::expected<void, Error> Unpacker::FileWriter::copy(archive* in) {
  for (;;) {
    // libarchive's own buffer (no copy); `offset` skips the holes of a
    // sparse entry, written out as zeros (an artifact has no holes).
    const void* data = nullptr;
    std::size_t length = 0;
    la_int64_t offset = 0;
    const int rc = archive_read_data_block(in, &data, &length, &offset);
    if (rc == ARCHIVE_EOF) break;
    std::expected<void, Error> ok;
    if (rc < ARCHIVE_WARN || offset < 0 || static_cast<std::uint64_t>(offset) < m_size)
      ok = std::unexpected(invalid_error("archive entry '" + m_name + "' is damaged: " +
                                         (rc < ARCHIVE_WARN ? archive_error_string(in) : "bad block offset")));
    while (ok && m_size < static_cast<std::uint64_t>(offset)) {
      const auto gap = std::min<std::uint64_t>(static_cast<std::uint64_t>(offset) - m_size, m_u.m_zeros.size());
      ok = put(std::span<const std::byte>(m_u.m_zeros.data(), static_cast<std::size_t>(gap)));
    }
    if (ok) ok = put(std::span<const std::byte>(static_cast<const std::byte*>(data), length));
    if (!ok) return ok;
  }
  const auto& steps_ok = join();
  if (std::find(steps_ok.begin(), steps_ok.end(), false) != steps_ok.end()) return std::unexpected(step_error());
  if (m_chunks)  // every lane succeeded; the chunks must also all have arrived
    if (std::string problem = m_chunks->problem(); !problem.empty()) return std::unexpected(refusal(m_name, problem));
  return {};
}

std::expected<UnpackedFile, Error> Unpacker::FileWriter::close(mode_t perm) {
  for (std::size_t t = 0; t < m_fds.size(); ++t) {
    const bool ok = ::fchmod(m_fds[t], perm) == 0 && (t > 0 || !m_u.m_options.sync || ::fsync(m_fds[t]) == 0);
    const int fd = std::exchange(m_fds[t], -1);
    if (::close(fd) != 0 || !ok) return std::unexpected(io_error(errno_message("writing", m_u.m_roots[t] / m_rel)));
  }
  std::string sha256 = m_chunks ? m_signed->sha256 : m_u.m_options.hash ? m_hasher.digest().hex() : std::string();
  return UnpackedFile{m_name, m_size, std::move(sha256), perm, m_chunks.has_value()};
}

std::expected<void, Error> Unpacker::file(archive* in, const fs::path& rel, const std::string& name, mode_t perm,
                                          std::int64_t declared_size) {
  FileWriter writer(*this, rel, name, declared_size);
  if (auto opened = writer.open(); !opened) return opened;
  if (auto copied = writer.copy(in); !copied) return copied;
  auto written = writer.close(perm);
  if (!written) return std::unexpected(written.error());
  files.push_back(std::move(*written));
  return {};
}

}  // namespace orc::cache
