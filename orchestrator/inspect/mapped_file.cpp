#include "orchestrator/inspect/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace orc::inspect {

namespace {

// Closes the descriptor on every path out of open(): the mapping outlives it.
class Descriptor {
 public:
  explicit Descriptor(int fd) : m_fd(fd) {}
  ~Descriptor() {
    if (m_fd >= 0) ::close(m_fd);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return m_fd; }

 private:
  int m_fd;
};

std::string error_text(int error) { return std::strerror(error); }

}  // namespace

std::expected<MappedFile, std::string> MappedFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  // forever; it changes nothing for a regular file, and fstat refuses the rest.
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return std::unexpected(error_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return std::unexpected(error_text(errno));
  // mmap of a directory fails with ENODEV; say what is actually wrong.
  if (S_ISDIR(st.st_mode)) return std::unexpected(error_text(EISDIR));
  if (!S_ISREG(st.st_mode)) return std::unexpected("not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // mmap refuses a length of 0; an empty file is simply no bytes.
  if (size == 0) return MappedFile();
  void* data = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (data == MAP_FAILED) return std::unexpected(error_text(errno));
  // Readers walk front to back; read-ahead helps, and failure costs nothing.
  (void)::madvise(data, static_cast<std::size_t>(size), MADV_SEQUENTIAL);
  return MappedFile(data, size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    m_data = std::exchange(other.m_data, nullptr);
    m_size = std::exchange(other.m_size, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() noexcept {
  if (m_data) ::munmap(m_data, static_cast<std::size_t>(m_size));
  m_data = nullptr;
  m_size = 0;
}

}  // namespace orc::inspect
