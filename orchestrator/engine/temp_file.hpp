#pragma once
// A temporary file that is removed when the object goes (private to the
// engine module): tars on their way to or from the engine.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <expected>
#include <filesystem>
#include <string>
#include <system_error>

namespace orc::engine {

class TempFile {
 public:
  // A new empty file in the system temp directory, named after `stem`.
  static std::expected<TempFile, std::string> create(std::string_view stem) {
    std::error_code ec;
    auto dir = std::filesystem::temp_directory_path(ec);
    if (ec) dir = "/tmp";
    std::string name = (dir / (std::string("orc-") + std::string(stem) + "-XXXXXX")).string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0) return std::unexpected(name + ": " + std::strerror(errno));
    ::close(fd);
    return TempFile(std::move(name));
  }

  TempFile(TempFile&& other) noexcept : m_path(std::move(other.m_path)) { other.m_path.clear(); }
  TempFile& operator=(TempFile&&) = delete;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!m_path.empty()) {
      std::error_code ec;
      std::filesystem::remove(m_path, ec);
    }
  }

  const std::filesystem::path& path() const { return m_path; }

 private:
  explicit TempFile(std::filesystem::path path) : m_path(std::move(path)) {}
  std::filesystem::path m_path;
};

}  // namespace orc::engine
