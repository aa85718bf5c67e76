#include "orchestrator/util/fs.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "orchestrator/util/fd.hpp"
#include "orchestrator/util/write.hpp"

namespace orc::util {

namespace fs = std::filesystem;

namespace {

FsError error(FsErrorKind kind, const fs::path& path, std::string reason, std::uint64_t size = 0) {
  std::string message = path.string() + ": " + reason;
  return FsError{.kind = kind, .reason = std::move(reason), .message = std::move(message), .size = size};
}

FsError errno_error(FsErrorKind kind, std::string_view what, const fs::path& path) {
  const int err = errno;
  const std::string reason = std::strerror(err);
  return FsError{.kind = kind,
                 .reason = reason,
                 .message = std::string(what) + " " + path.string() + ": " + reason,
                 .error_number = err};
}

std::string cap_text(std::uint64_t max_bytes) {
  if (max_bytes >= (1u << 20) && max_bytes % (1u << 20) == 0) return std::to_string(max_bytes >> 20) + " MiB";
  return std::to_string(max_bytes) + " bytes";
}

std::expected<void, FsError> write_all(int fd, std::string_view bytes, const fs::path& temp) {
  if (!util::write_all(fd, bytes)) return std::unexpected(errno_error(FsErrorKind::io, "writing", temp));
  return {};
}

}  // namespace

std::expected<std::string, FsError> read_file(const fs::path& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer, and a few kernel
  // files (/proc/kmsg) that look regular would otherwise block on read.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return std::unexpected(error(FsErrorKind::not_found, path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return std::unexpected(error(FsErrorKind::io, path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return std::unexpected(error(FsErrorKind::directory, path, "it is a directory"));
  if (!S_ISREG(st.st_mode)) return std::unexpected(error(FsErrorKind::not_regular, path, "not a regular file"));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    return std::unexpected(error(FsErrorKind::too_large, path, "larger than " + cap_text(max_bytes), size));
  std::string text;
  text.reserve(static_cast<std::size_t>(size));
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(error(FsErrorKind::io, path, std::strerror(errno)));
    if (n == 0) break;
    if (text.size() + static_cast<std::uint64_t>(n) > max_bytes)
      return std::unexpected(error(FsErrorKind::too_large, path, "larger than " + cap_text(max_bytes),
                                   text.size() + static_cast<std::uint64_t>(n)));
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

fs::path temp_name(const fs::path& dir, std::string_view stem) {
  static std::atomic<unsigned long> counter{0};
  return dir / (std::string(stem) + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp");
}

void fsync_dir(const fs::path& dir) {
  Fd fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() >= 0) ::fsync(fd.get());
}

std::expected<bool, FsError> commit_no_replace(const fs::path& temp, const fs::path& target) {
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  int rc = ::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE);
  // File systems without RENAME_NOREPLACE: link() fails on an existing name too.
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
    rc = ::link(temp.c_str(), target.c_str());
    if (rc == 0) fs::remove(temp, ec);
  }
  if (rc != 0) {
    const int err = errno;
    const FsError failure = errno_error(FsErrorKind::io, "moving into place", target);
    fs::remove(temp, ec);
    if (err == EEXIST) return false;
    return std::unexpected(failure);
  }
  fsync_dir(target.parent_path());
  return true;
}

std::expected<void, FsError> write_file_atomic(const fs::path& target, std::string_view bytes, const AtomicWrite& how) {
  std::error_code ec;
  const fs::path dir = how.tmp_dir.empty() ? target.parent_path() : how.tmp_dir;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
  const fs::path temp = temp_name(dir, target.filename().string());
  Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(how.mode)));
  if (fd.get() < 0) return std::unexpected(errno_error(FsErrorKind::io, "creating", temp));
  auto written = write_all(fd.get(), bytes, temp);
  if (written && ::fsync(fd.get()) != 0) written = std::unexpected(errno_error(FsErrorKind::io, "syncing", temp));
  if (fd.close() != 0 && written) written = std::unexpected(errno_error(FsErrorKind::io, "closing", temp));
  if (!written) {
    fs::remove(temp, ec);
    return std::unexpected(written.error());
  }
  if (how.replace == Replace::refuse) {
    auto moved = commit_no_replace(temp, target);
    if (!moved) return std::unexpected(moved.error());
    if (!*moved) return std::unexpected(error(FsErrorKind::exists, target, "already exists; not replaced"));
    return {};
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const FsError failure = errno_error(FsErrorKind::io, "renaming into", target);
    fs::remove(temp, ec);
    return std::unexpected(failure);
  }
  fsync_dir(target.parent_path());
  return {};
}

}  // namespace orc::util
