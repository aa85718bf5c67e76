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

FileLock::~FileLock() {
  // Closing the descriptor releases the flock.
  if (m_fd >= 0) ::close(m_fd);
}

}  // namespace orc::util
