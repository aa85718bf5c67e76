#include "orchestrator/cache/files.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

namespace orc::cache {

namespace fs = std::filesystem;

std::string errno_message(std::string_view what, const fs::path& path) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(errno);
}

std::string utc_rfc3339(std::int64_t seconds) {
  const std::time_t t = seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::int64_t unix_seconds(const std::string& rfc3339) {
  std::tm tm{};
  if (::strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return std::time(nullptr);
  return ::timegm(&tm);
}

fs::path default_store_root() {
  if (const char* dir = std::getenv("ORCHESTRATE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "orchestrate";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "orchestrate";
  return fs::temp_directory_path() / "orchestrate-cache";
}

fs::path default_keys_dir() {
  if (const char* dir = std::getenv("ORCHESTRATE_KEYS_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return fs::path(xdg) / "orchestrate" / "keys";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".config" / "orchestrate" / "keys";
  return fs::temp_directory_path() / "orchestrate-keys";
}

fs::path temp_name(const fs::path& dir, std::string_view stem) {
  static std::atomic<unsigned long> counter{0};
  return dir / (std::string(stem) + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp");
}

void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::expected<bool, Error> commit_no_replace(const fs::path& temp, const fs::path& target) {
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
    const std::string message = errno_message("moving into place", target);
    fs::remove(temp, ec);
    if (err == EEXIST) return false;
    return std::unexpected(io_error(message));
  }
  fsync_dir(target.parent_path());
  return true;
}

std::expected<void, Error> write_file_atomic(const fs::path& target, std::string_view bytes, const fs::path& tmp_dir,
                                             unsigned mode, Replace replace) {
  std::error_code ec;
  fs::create_directories(tmp_dir, ec);
  const fs::path temp = temp_name(tmp_dir, target.filename().string());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return std::unexpected(io_error(errno_message("creating", temp)));
  std::size_t done = 0;
  std::string failure;
  while (done < bytes.size() && failure.empty()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      failure = errno_message("writing", temp);
    else
      done += static_cast<std::size_t>(n);
  }
  if (failure.empty() && ::fsync(fd) != 0) failure = errno_message("syncing", temp);
  if (::close(fd) != 0 && failure.empty()) failure = errno_message("closing", temp);
  if (!failure.empty()) {
    fs::remove(temp, ec);
    return std::unexpected(io_error(failure));
  }
  if (replace == Replace::refuse) {
    auto moved = commit_no_replace(temp, target);
    if (!moved) return std::unexpected(moved.error());
    if (!*moved) return std::unexpected(invalid_error(target.string() + " already exists; not replaced"));
    return {};
  }
  fs::create_directories(target.parent_path(), ec);
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string message = errno_message("renaming into", target);
    fs::remove(temp, ec);
    return std::unexpected(io_error(message));
  }
  fsync_dir(target.parent_path());
  return {};
}

std::expected<std::string, Error> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(Error{ErrorKind::not_found, "cannot read " + path.string()});
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::unexpected(io_error("reading " + path.string() + " failed"));
  return text.str();
}

std::expected<std::string, Error> read_small_file(const fs::path& path, std::uint64_t max_bytes,
                                                  std::string_view what) {
  // O_NONBLOCK: a FIFO opens at once and is refused below, not waited on.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::unexpected(Error{ErrorKind::not_found, errno_message("cannot read", path)});
  struct stat st {};
  std::string text;
  std::optional<Error> error;
  if (::fstat(fd, &st) != 0) {
    error = io_error(errno_message("cannot stat", path));
  } else if (!S_ISREG(st.st_mode)) {
    error = invalid_error(path.string() + " is not a regular file; give " + std::string(what));
  } else if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    error = invalid_error(path.string() + " is " + std::to_string(st.st_size) + " bytes, more than " +
                          std::string(what) + " holds (at most " + std::to_string(max_bytes) + ")");
  } else {
    // Read at most one byte past the limit: a file that grows is still capped.
    text.resize(static_cast<std::size_t>(max_bytes) + 1);
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error = io_error(errno_message("reading", path));
        break;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (!error && got > max_bytes)
      error = invalid_error(path.string() + " grew past " + std::to_string(max_bytes) + " bytes while read");
    text.resize(got);
  }
  ::close(fd);
  if (error) return std::unexpected(*error);
  return text;
}

}  // namespace orc::cache
