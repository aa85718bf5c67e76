#include "orchestrator/inspect/mapped_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
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

// The innermost live ReadGuard of this thread. initial-exec: the handler
// must not be the first to touch it (a dynamic TLS access may allocate).
[[gnu::tls_model("initial-exec")]] thread_local const ReadGuard* t_innermost = nullptr;

std::uintptr_t g_page_size = 4096;
struct sigaction g_previous {};

}  // namespace

// The SIGBUS handler: survives a guarded read past the end of a file that
// shrank (mapped_file.hpp says how), passes every other SIGBUS on.
struct BusErrorHandler {
  static void install() {
    static std::once_flag once;
    std::call_once(once, [] {
      g_page_size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
      // The previous action is read first: a SIGBUS on another thread just
      // after ours is in place must find where to go.
      ::sigaction(SIGBUS, nullptr, &g_previous);
      struct sigaction action {};
      action.sa_sigaction = &BusErrorHandler::handle;
      action.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&action.sa_mask);
      ::sigaction(SIGBUS, &action, nullptr);
    });
  }

  static void handle(int signal, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    const bool survived = info->si_code > 0 && zero_rest_of_mapping(reinterpret_cast<std::uintptr_t>(info->si_addr));
    errno = saved_errno;
    if (!survived) pass_on(signal, info, context);
  }

  // True when `address` lies in a mapping this thread guards and zeros now
  // stand in for the rest of it.
  static bool zero_rest_of_mapping(std::uintptr_t address) {
    for (const ReadGuard* g = t_innermost; g; g = g->m_outer) {
      if (address < g->m_begin || address >= g->m_end) continue;
      const std::uintptr_t page = address & ~(g_page_size - 1);
      void* zeros = ::mmap(reinterpret_cast<void*>(page), g->m_end - page, PROT_READ,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (zeros == MAP_FAILED) return false;
      g->m_cut_short->store(true, std::memory_order_relaxed);
      return true;
    }
    return false;
  }

  // To the handler installed before ours; with none, the default action
  // comes back and the signal, raised again, ends the process as before
  // (it is blocked until this handler returns, then delivered).
  static void pass_on(int signal, siginfo_t* info, void* context) {
    if (g_previous.sa_flags & SA_SIGINFO) {
      if (g_previous.sa_sigaction) return g_previous.sa_sigaction(signal, info, context);
    } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
      return g_previous.sa_handler(signal);
    }
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    ::sigaction(SIGBUS, &fallback, nullptr);
    ::raise(signal);
  }
};

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
  MappedFile file;
  file.m_path = path;
  file.m_device = st.st_dev;
  file.m_inode = st.st_ino;
  file.m_modified = st.st_mtim;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // mmap refuses a length of 0; an empty file is simply no bytes.
  if (size == 0) return file;
  void* data = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (data == MAP_FAILED) return std::unexpected(error_text(errno));
  // Readers walk front to back; read-ahead helps, and failure costs nothing.
  (void)::madvise(data, static_cast<std::size_t>(size), MADV_SEQUENTIAL);
  file.m_data = data;
  file.m_size = size;
  return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    m_data = std::exchange(other.m_data, nullptr);
    m_size = std::exchange(other.m_size, 0);
    m_path = std::move(other.m_path);
    m_device = other.m_device;
    m_inode = other.m_inode;
    m_modified = other.m_modified;
    m_cut_short.store(other.m_cut_short.exchange(false));
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() noexcept {
  if (m_data) ::munmap(m_data, static_cast<std::size_t>(m_size));
  m_data = nullptr;
  m_size = 0;
}

std::optional<std::string> MappedFile::changed() const {
  struct stat now {};
  const bool same_file = ::stat(m_path.c_str(), &now) == 0 && now.st_dev == m_device && now.st_ino == m_inode;
  const auto now_size = static_cast<std::uint64_t>(now.st_size);
  const std::string sizes = std::to_string(m_size) + " bytes when opened";
  if (same_file && now_size < m_size)
    return "changed while being read (truncated to " + std::to_string(now_size) + " bytes, from " + sizes + ")";
  if (m_cut_short.load())
    return same_file ? "could not be read: SIGBUS on its mapping (an I/O error, or it was truncated and grew back)"
                     : "changed while being read (truncated, then removed or replaced)";
  if (!same_file) return std::nullopt;
  if (now_size != m_size) return "changed while being read (now " + std::to_string(now_size) + " bytes, " + sizes + ")";
  if (now.st_mtim.tv_sec != m_modified.tv_sec || now.st_mtim.tv_nsec != m_modified.tv_nsec)
    return "changed while being read (modified in place)";
  return std::nullopt;
}

ReadGuard::ReadGuard(MappedFile& file)
    : m_begin(reinterpret_cast<std::uintptr_t>(file.m_data)), m_cut_short(&file.m_cut_short), m_outer(t_innermost) {
  BusErrorHandler::install();
  const std::uintptr_t mask = g_page_size - 1;
  m_end = m_begin + ((static_cast<std::uintptr_t>(file.m_size) + mask) & ~mask);
  t_innermost = this;
  // The handler runs on this thread, between any two instructions: the
  // chain must be in place before the first guarded read.
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

ReadGuard::~ReadGuard() {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_innermost = m_outer;
}

}  // namespace orc::inspect
