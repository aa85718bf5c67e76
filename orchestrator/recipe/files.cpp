// File access for load_config and include: reading with limits, and the
// small glob (`*`, `?` in the last component) that include patterns use.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"

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

bool has_wildcard(std::string_view s) { return s.find_first_of("*?") != std::string_view::npos; }

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

bool glob_match(std::string_view pattern, std::string_view name) {
  if (!name.empty() && name.front() == '.' && (pattern.empty() || pattern.front() != '.')) return false;
  // Iterative matching with one backtrack point: linear in practice, and
  // never exponential however many stars a pattern has.
  std::size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::expected<std::vector<std::filesystem::path>, std::string> expand_include(const SourceFile& including,
                                                                              const std::string& pattern) {
  if (pattern.empty()) return std::unexpected("empty include path");
  const std::filesystem::path written(pattern);
  const std::string last = written.filename().string();
  if (last.empty()) return std::unexpected("include '" + pattern + "' names a directory, not a file");
  if (has_wildcard(written.parent_path().string()))
    return std::unexpected("include '" + pattern + "': wildcards are allowed only in the last path component");
  const std::filesystem::path full =
      (written.is_absolute() ? written : including.base_dir() / written).lexically_normal();
  if (!has_wildcard(last)) return std::vector<std::filesystem::path>{full};

  const std::filesystem::path dir = full.parent_path().empty() ? "." : full.parent_path();
  std::vector<std::filesystem::path> matches;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!glob_match(last, name)) continue;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    matches.push_back(full.parent_path() / name);
    if (matches.size() > k_max_included_files)
      return std::unexpected("include '" + pattern + "' matches more than " + std::to_string(k_max_included_files) +
                             " files");
  }
  if (ec) return std::unexpected("cannot list " + dir.string() + ": " + ec.message());
  std::ranges::sort(matches);
  return matches;
}

}  // namespace orc::recipe::detail
