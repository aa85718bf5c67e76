#include "orchestrator/util/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::util {

FileLock::FileLock(const std::filesystem::path& path, std::ostream& progress) : m_path(path) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  // flock needs no write access: a lock file that exists on a read-only
  // file system still excludes the processes that share it read-write.
  if (m_fd < 0 && errno == EROFS) m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (m_fd < 0)
    throw Failure(ExitCode::outside_failure,
                  "cannot open the lock file " + path.string() + ": " + std::strerror(errno));
  if (::flock(m_fd, LOCK_EX | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK) {
    progress << "waiting for " << path.string() << " (another orchestrate is filling the same cache entry)"
             << std::endl;
    int rc = 0;
    while ((rc = ::flock(m_fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc == 0) return;
  }
  const int err = errno;
  ::close(m_fd);
  throw Failure(ExitCode::outside_failure, "cannot lock " + path.string() + ": " + std::strerror(err));
}

FileLock::FileLock(const std::filesystem::path& path, NoWait) : m_path(path) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Failure(ExitCode::outside_failure,
                  "cannot open the lock file " + path.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return;
  }
  m_fd = fd;
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(m_fd, 0) == 0 && ::pwrite(m_fd, pid.data(), pid.size(), 0) < 0) {
    // The ID is only for messages; the lock is held either way.
  }
}

std::string FileLock::holder() const {
  char buffer[32] = {};
  const int fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const ssize_t got = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  std::string out(buffer, got > 0 ? static_cast<std::size_t>(got) : 0);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out.find_first_not_of("0123456789") == std::string::npos ? out : std::string();
}

FileLock::~FileLock() {
  // Closing the descriptor releases the flock.
  if (m_fd >= 0) ::close(m_fd);
}

}  // namespace orc::util
