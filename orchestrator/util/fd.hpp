#pragma once
// The one owner of a POSIX file descriptor: closed when it goes out of scope,
// on every way out of the function that opened it.
#include <unistd.h>

namespace orc::util {

class Fd {
 public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  ~Fd() { close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return m_fd; }
  // Closes what it holds and takes `fd`.
  void reset(int fd = -1) {
    close();
    m_fd = fd;
  }
  // close(2)'s result, so a writer can see a failed close (0 when empty).
  int close() {
    const int rc = m_fd >= 0 ? ::close(m_fd) : 0;
    m_fd = -1;
    return rc;
  }

 private:
  int m_fd;
};

}  // namespace orc::util
