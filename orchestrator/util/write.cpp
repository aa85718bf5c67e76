#include "orchestrator/util/write.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace orc::util {

namespace {

// One loop for write and pwrite: `call(data, size, done)` writes from
// bytes[done] and returns what write(2) would.
template <typename Call>
bool write_pieces(std::span<const std::byte> bytes, Call call) {
  for (std::size_t done = 0; done < bytes.size();) {
    const std::size_t piece = std::min(bytes.size() - done, k_write_piece);
    const ssize_t n = call(bytes.data() + done, piece, done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool write_all(int fd, std::span<const std::byte> bytes) {
  return write_pieces(bytes,
                      [fd](const std::byte* data, std::size_t size, std::size_t) { return ::write(fd, data, size); });
}

bool write_all(int fd, std::string_view bytes) { return write_all(fd, std::as_bytes(std::span(bytes))); }

bool pwrite_all(int fd, std::span<const std::byte> bytes, off_t offset) {
  return write_pieces(bytes, [fd, offset](const std::byte* data, std::size_t size, std::size_t done) {
    return ::pwrite(fd, data, size, offset + static_cast<off_t>(done));
  });
}

}  // namespace orc::util
