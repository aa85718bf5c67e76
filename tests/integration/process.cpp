#include "tests/integration/process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace orc::integration {

namespace {

// Closes a descriptor on every path out of run_process.
class Fd {
 public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return m_fd; }
  void reset() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
  }

 private:
  int m_fd;
};

class FileActions {
 public:
  FileActions() { ::posix_spawn_file_actions_init(&m_actions); }
  ~FileActions() { ::posix_spawn_file_actions_destroy(&m_actions); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &m_actions; }

 private:
  posix_spawn_file_actions_t m_actions;
};

ProcessResult failed_to_start(const std::vector<std::string>& argv, int error) {
  return {.exit_code = -1, .output = "cannot start " + quoted(argv) + ": " + std::strerror(error)};
}

}  // namespace

// posix_spawnp rather than fork: the suites run commands from several threads,
// and a forked child of a threaded process may only call async-signal-safe
// functions. Both pipe ends are close-on-exec so a sibling child started by
// another thread never holds this child's write end open (which would keep
// the read below from ever seeing EOF).
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return failed_to_start(argv, errno);
  Fd read_end(ends[0]), write_end(ends[1]);

  FileActions actions;
  ::posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(actions.get(), write_end.get(), STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(actions.get(), write_end.get(), STDERR_FILENO);
  if (!cwd.empty()) ::posix_spawn_file_actions_addchdir_np(actions.get(), cwd.c_str());

  pid_t pid = 0;
  if (const int error = ::posix_spawnp(&pid, args[0], actions.get(), nullptr, args.data(), environ); error != 0)
    return failed_to_start(argv, error);
  write_end.reset();

  ProcessResult result;
  char buffer[8192];
  while (true) {
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return failed_to_start(argv, errno);
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::vector<ProcessResult> run_parallel(std::span<const std::vector<std::string>> commands, unsigned jobs) {
  std::vector<ProcessResult> results(commands.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < commands.size(); i = next++) results[i] = run_process(commands[i]);
  };
  {
    // Joined at the end of this block, before `results` is returned.
    std::vector<std::jthread> workers;
    for (unsigned j = 0; j < std::max(jobs, 1u); ++j) workers.emplace_back(worker);
  }
  return results;
}

std::string quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-+=.,/:@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

TempDir::TempDir(std::string_view prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  m_path = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(m_path, ignored);
}

std::string env_or(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

}  // namespace orc::integration
