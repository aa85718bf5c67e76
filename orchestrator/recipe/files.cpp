// File access for load_config and include: reading with limits, and include
// patterns expanded by the schema's one glob (util/glob.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"
#include "orchestrator/util/glob.hpp"

namespace orc::recipe::detail {

namespace {

// Closes the descriptor on every path out of read_file.
class Fd {
 public:
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  int get() const { return m_fd; }

 private:
  int m_fd;
};

}  // namespace

std::expected<std::string, std::string> read_file(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer, and a few kernel
  // files (/proc/kmsg) that look regular would otherwise block on read.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return std::unexpected(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return std::unexpected(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return std::unexpected("it is a directory");
  if (!S_ISREG(st.st_mode)) return std::unexpected("not a regular file");
  if (static_cast<std::uintmax_t>(st.st_size) > k_max_file_bytes)
    return std::unexpected("larger than " + std::to_string(k_max_file_bytes >> 20) + " MiB");
  std::string text;
  char buffer[16384];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(std::strerror(errno));
    }
    if (n == 0) break;
    // st_size is 0 for /proc files, so the limit is enforced while reading too.
    if (text.size() + static_cast<std::size_t>(n) > k_max_file_bytes)
      return std::unexpected("larger than " + std::to_string(k_max_file_bytes >> 20) + " MiB");
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

std::expected<std::vector<std::filesystem::path>, std::string> expand_include(const SourceFile& including,
                                                                              const std::string& pattern) {
  namespace fs = std::filesystem;
  if (pattern.empty()) return std::unexpected("empty include path");
  const fs::path written(pattern);
  if (written.filename().empty()) return std::unexpected("include '" + pattern + "' names a directory, not a file");
  const fs::path full = (written.is_absolute() ? written : including.base_dir() / written).lexically_normal();
  // The components before the first wildcard name one directory, the root
  // the glob walks from (a symlinked directory under it is entered only when
  // it stays inside it); the rest is the glob.
  fs::path dir, glob;
  for (const auto& part : full) {
    if (glob.empty() && !util::glob_has_wildcard(part.string()))
      dir /= part;
    else
      glob /= part;
  }
  if (glob.empty()) return std::vector<fs::path>{full};

  const fs::path listed = dir.empty() ? "." : dir;
  std::error_code ec;
  if (fs::directory_iterator probe(listed, ec); ec)
    return std::unexpected("cannot list " + listed.string() + ": " + ec.message());
  const auto found = util::glob_files(listed, glob.generic_string(), {.max_matches = k_max_included_files});
  if (found.size() > k_max_included_files)
    return std::unexpected("include '" + pattern + "' matches more than " + std::to_string(k_max_included_files) +
                           " files");
  std::vector<fs::path> matches;
  for (const auto& rel : found) matches.push_back(dir / rel);
  return matches;
}

}  // namespace orc::recipe::detail
