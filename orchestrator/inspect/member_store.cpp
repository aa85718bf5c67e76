// MemberStore (member_store.hpp): a package member's bytes in memory, or
// in an unnamed temporary file past the in-memory limit.
#include "orchestrator/inspect/member_store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "orchestrator/util/env.hpp"
#include "orchestrator/util/write.hpp"

namespace orc::inspect {

namespace {

std::string errno_text(std::string_view what, const std::filesystem::path& where) {
  return std::string(what) + " " + where.string() + ": " + std::strerror(errno);
}

// $TMPDIR, else /var/tmp: members can be gigabytes, and /tmp is often RAM.
std::filesystem::path spill_dir() {
  if (auto dir = util::env_get("TMPDIR")) return *dir;
  std::error_code ec;
  if (std::filesystem::is_directory("/var/tmp", ec)) return "/var/tmp";
  return "/tmp";
}

bool all_zero(Bytes b) {
  return b.empty() || (b[0] == std::byte{0} && std::memcmp(b.data(), b.data() + 1, b.size() - 1) == 0);
}

}  // namespace

// A member too large for memory, in an unnamed temporary file (O_TMPFILE:
// it is gone when closed, even after a crash; an unlinked mkstemp file where
// the file system lacks it), mapped read-only once complete. Zero chunks
// are not written but left as holes: an ELF padded with gigabytes of zeros
// costs no disk.
class SpillFile {
 public:
  SpillFile() = default;
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;
  ~SpillFile() {
    if (m_data) ::munmap(m_data, static_cast<std::size_t>(m_size));
    if (m_fd >= 0) ::close(m_fd);
  }

  std::expected<void, std::string> open() {
    m_dir = spill_dir();
    m_fd = ::open(m_dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (m_fd >= 0) return {};
    std::string name = (m_dir / "orchestrate-member-XXXXXX").string();
    m_fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (m_fd < 0) return std::unexpected(errno_text("cannot create a temporary file in", m_dir));
    ::unlink(name.c_str());
    return {};
  }

  std::expected<void, std::string> write(Bytes chunk) {
    if (!all_zero(chunk)) {
      if (!util::pwrite_all(m_fd, chunk, static_cast<off_t>(m_size)))
        return std::unexpected(errno_text("cannot write a temporary file in", m_dir));
    }
    m_size += chunk.size();
    return {};
  }

  std::expected<Bytes, std::string> map() {
    if (::ftruncate(m_fd, static_cast<off_t>(m_size)) != 0)
      return std::unexpected(errno_text("cannot size a temporary file in", m_dir));
    if (m_size == 0) return Bytes{};
    void* data = ::mmap(nullptr, static_cast<std::size_t>(m_size), PROT_READ, MAP_PRIVATE, m_fd, 0);
    if (data == MAP_FAILED) return std::unexpected(errno_text("cannot map a temporary file in", m_dir));
    m_data = data;
    return Bytes(static_cast<const std::byte*>(m_data), static_cast<std::size_t>(m_size));
  }

 private:
  std::filesystem::path m_dir;
  int m_fd = -1;
  std::uint64_t m_size = 0;
  void* m_data = nullptr;
};

MemberStore::MemberStore(std::uint64_t declared, std::uint64_t in_memory) : m_in_memory(in_memory) {
  if (declared <= in_memory)
    m_memory.reserve(static_cast<std::size_t>(declared));
  else
    m_in_memory = 0;
}

MemberStore::~MemberStore() = default;

std::expected<void, std::string> MemberStore::append(Bytes chunk) {
  if (!m_spill && m_memory.size() + chunk.size() <= m_in_memory) {
    m_memory.insert(m_memory.end(), chunk.begin(), chunk.end());
    return {};
  }
  if (!m_spill) {
    m_spill = std::make_unique<SpillFile>();
    if (auto opened = m_spill->open(); !opened) return opened;
    if (auto moved = m_spill->write(m_memory); !moved) return moved;
    std::vector<std::byte>().swap(m_memory);
  }
  return m_spill->write(chunk);
}

std::expected<Bytes, std::string> MemberStore::bytes() {
  if (m_spill) return m_spill->map();
  return Bytes(m_memory);
}

}  // namespace orc::inspect
