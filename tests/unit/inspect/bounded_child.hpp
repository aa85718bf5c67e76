#pragma once
// A test's work run in a child process bounded in address space and in
// time: a scan that runs out of memory or does not end fails the test, not
// the machine. The limit is RLIMIT_AS, `extra` bytes above what the child
// maps at its start (its share of the test binary, the inputs the parent
// made); a hang is killed after `hang_seconds` (generous: it catches a
// scan that does not end, it times nothing).
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <new>
#include <string>
#include <thread>

namespace orc::inspect::testing {

inline std::uint64_t address_space_now() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Empty when `work` returned empty in the child; otherwise what went
// wrong: its message, out of memory, a signal, a hang.
inline std::string run_bounded(const std::function<std::string()>& work, std::uint64_t extra, int hang_seconds) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child < 0) return "fork failed";
  if (child == 0) {
    ::close(fds[0]);
    std::string message;
    const rlimit limit{.rlim_cur = address_space_now() + extra, .rlim_max = RLIM_INFINITY};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) {
      message = "setrlimit failed";
    } else {
      try {
        message = work();
      } catch (const std::bad_alloc&) {
        message = "out of memory (std::bad_alloc) under the address-space limit";
      } catch (const std::exception& e) {
        message = std::string("threw: ") + e.what();
      }
    }
    // Short enough for the pipe's buffer: the write does not wait for the
    // parent, which reads once the child has ended.
    message.resize(std::min<std::size_t>(message.size(), 4096));
    if (!message.empty()) (void)!::write(fds[1], message.data(), message.size());
    ::_exit(message.empty() ? 0 : 1);
  }
  ::close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(hang_seconds);
  int status = 0;
  std::string outcome;
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      outcome = "did not finish within " + std::to_string(hang_seconds) + " s (killed)";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  char buffer[4096];
  const auto n = ::read(fds[0], buffer, sizeof buffer);
  ::close(fds[0]);
  if (!outcome.empty()) return outcome;
  if (WIFSIGNALED(status)) return "the child died of signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) == 0) return {};
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "exit " + std::to_string(WEXITSTATUS(status));
}

}  // namespace orc::inspect::testing
