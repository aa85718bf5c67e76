#include "orchestrator/util/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>

#include "orchestrator/util/fd.hpp"

extern char** environ;

namespace orc::util {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Pipe {
  Fd read, write;
};

bool open_pipe(Pipe& p) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return false;
  p.read.reset(ends[0]);
  p.write.reset(ends[1]);
  return true;
}

// posix_spawn's attribute and file-action objects, destroyed on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawnattr_init(&m_attr);
    ::posix_spawn_file_actions_init(&m_actions);
  }
  ~SpawnSetup() {
    ::posix_spawnattr_destroy(&m_attr);
    ::posix_spawn_file_actions_destroy(&m_actions);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  posix_spawnattr_t* attr() { return &m_attr; }
  posix_spawn_file_actions_t* actions() { return &m_actions; }

 private:
  posix_spawnattr_t m_attr;
  posix_spawn_file_actions_t m_actions;
};

std::map<std::string, std::string> child_environment(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  if (spec.env_mode == EnvMode::inherit)
    for (char** e = environ; *e; ++e) {
      const std::string_view entry(*e);
      if (const auto eq = entry.find('='); eq != std::string_view::npos)
        env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
    }
  for (const auto& [name, value] : spec.env) env[name] = value;
  return env;
}

// Its own process group, so a stop reaches everything the child started;
// signals as a fresh program expects them (none blocked, default actions
// for the ones a caller of ours may catch or ignore).
void set_attributes(SpawnSetup& setup) {
  ::posix_spawnattr_setpgroup(setup.attr(), 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, s);
  ::posix_spawnattr_setsigmask(setup.attr(), &none);
  ::posix_spawnattr_setsigdefault(setup.attr(), &defaults);
  ::posix_spawnattr_setflags(setup.attr(), POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

// The tail of one stream, kept to the cap.
struct Captured {
  std::string text;
  std::size_t total = 0;
  void add(std::string_view bytes, std::size_t cap) {
    total += bytes.size();
    if (cap == 0) return;
    text.append(bytes);
    if (text.size() > cap && text.size() - cap > cap) text.erase(0, text.size() - cap);  // amortised trim
  }
  void finish(std::size_t cap, std::string& into, bool& truncated) {
    if (text.size() > cap) text.erase(0, text.size() - cap);
    into = std::move(text);
    truncated = total > cap;
  }
};

// Reads both pipes and reaps the child, stopping its group on cancel or
// timeout: SIGTERM, then SIGKILL once the grace has passed.
class Watcher {
 public:
  Watcher(const ProcessSpec& spec, pid_t pid, int out_fd, int err_fd)
      : m_spec(spec), m_pid(pid), m_started(Clock::now()) {
    m_fds[0] = {out_fd, POLLIN, 0};
    m_fds[1] = {err_fd, POLLIN, 0};
  }

  ProcessResult run() {
    ProcessResult result;
    result.pid = m_pid;
    while (!m_reaped || open_fds() > 0) {
      check_stop(result);
      read_ready();
      reap(WNOHANG);
    }
    if (m_term_sent) ::kill(-m_pid, SIGKILL);  // what ignored SIGTERM and closed its pipes
    if (WIFEXITED(m_status)) result.exit_code = WEXITSTATUS(m_status);
    if (WIFSIGNALED(m_status)) result.signal = WTERMSIG(m_status);
    m_out.finish(m_spec.capture_cap, result.out, result.out_truncated);
    m_err.finish(m_spec.capture_cap, result.err, result.err_truncated);
    result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - m_started);
    return result;
  }

 private:
  int open_fds() const { return (m_fds[0].fd >= 0) + (m_fds[1].fd >= 0); }

  void check_stop(ProcessResult& result) {
    if (!m_term_sent) {
      if (m_spec.cancel && m_spec.cancel->load())
        result.cancelled = true;
      else if (m_spec.timeout && Clock::now() - m_started > *m_spec.timeout)
        result.timed_out = true;
      else
        return;
      ::kill(-m_pid, SIGTERM);
      m_term_sent = Clock::now();
    } else if (!m_kill_sent && Clock::now() - *m_term_sent > m_spec.kill_grace) {
      ::kill(-m_pid, SIGKILL);
      m_kill_sent = true;
    }
  }

  void read_ready() {
    if (open_fds() == 0) {
      // Output passed through: nothing to read, so wait on the child itself.
      if (!m_reaped) ::usleep(m_term_sent || m_spec.cancel || m_spec.timeout ? 20'000 : 2'000);
      return;
    }
    const int ready = ::poll(m_fds, 2, 100);
    if (ready <= 0) return;
    char buffer[16384];
    for (int i = 0; i < 2; ++i) {
      if (m_fds[i].fd < 0 || !(m_fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(m_fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        const std::string_view bytes(buffer, static_cast<std::size_t>(n));
        const auto stream = i == 0 ? OutputStream::out : OutputStream::err;
        (i == 0 ? m_out : m_err).add(bytes, m_spec.capture_cap);
        if (m_spec.on_output) m_spec.on_output(stream, bytes);
      } else if (n == 0 || errno != EINTR) {
        m_fds[i].fd = -1;  // the Fd owning it closes it
      }
    }
  }

  void reap(int flags) {
    if (m_reaped) return;
    const pid_t got = ::waitpid(m_pid, &m_status, flags);
    if (got == m_pid || (got < 0 && errno != EINTR)) m_reaped = true;
  }

  const ProcessSpec& m_spec;
  pid_t m_pid;
  Clock::time_point m_started;
  pollfd m_fds[2];
  Captured m_out, m_err;
  std::optional<Clock::time_point> m_term_sent;
  bool m_kill_sent = false;
  bool m_reaped = false;
  int m_status = 0;
};

ProcessError cannot_start(std::string message) {
  return ProcessError{.kind = ProcessErrorKind::cannot_start, .message = std::move(message)};
}

}  // namespace

std::optional<std::string> find_program(const std::string& name, std::string_view path_list) {
  if (name.find('/') != std::string::npos) return name;
  std::size_t start = 0;
  while (start <= path_list.size()) {
    std::size_t colon = path_list.find(':', start);
    if (colon == std::string_view::npos) colon = path_list.size();
    const std::string dir = colon > start ? std::string(path_list.substr(start, colon - start)) : ".";
    const std::string candidate = dir + "/" + name;
    std::error_code ec;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate, ec)) return candidate;
    start = colon + 1;
  }
  return std::nullopt;
}

namespace {

// Where the child's stdout and stderr go: pipes for capture, else a file,
// /dev/null or ours.
bool set_output(const ProcessSpec& spec, SpawnSetup& setup, Pipe& out, Pipe& err) {
  auto* actions = setup.actions();
  switch (spec.output) {
    case OutputMode::capture:
      if (!open_pipe(out) || (!spec.merge_stderr && !open_pipe(err))) return false;
      ::posix_spawn_file_actions_adddup2(actions, out.write.get(), STDOUT_FILENO);
      ::posix_spawn_file_actions_adddup2(actions, spec.merge_stderr ? out.write.get() : err.write.get(), STDERR_FILENO);
      return true;
    case OutputMode::file:
    case OutputMode::discard: {
      const std::string to = spec.output == OutputMode::file ? spec.output_file.string() : "/dev/null";
      ::posix_spawn_file_actions_addopen(actions, STDOUT_FILENO, to.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::posix_spawn_file_actions_adddup2(actions, STDOUT_FILENO, STDERR_FILENO);
      return true;
    }
    case OutputMode::inherit:
      if (spec.merge_stderr) ::posix_spawn_file_actions_adddup2(actions, STDOUT_FILENO, STDERR_FILENO);
      return true;
  }
  return true;
}

std::expected<pid_t, ProcessError> spawn(const ProcessSpec& spec, Pipe& out, Pipe& err) {
  if (spec.argv.empty()) return std::unexpected(cannot_start("run_process: an empty argv"));
  const auto env = child_environment(spec);
  const auto path = env.find("PATH");
  const auto program = find_program(spec.argv.front(), path != env.end() ? path->second : "/usr/bin:/bin");
  if (!program)
    return std::unexpected(
        ProcessError{.kind = ProcessErrorKind::not_found, .message = "'" + spec.argv.front() + "' not found on PATH"});

  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> argv_ptrs, env_ptrs;
  for (const auto& a : spec.argv) argv_ptrs.push_back(const_cast<char*>(a.c_str()));
  argv_ptrs.push_back(nullptr);
  for (auto& e : env_strings) env_ptrs.push_back(e.data());
  env_ptrs.push_back(nullptr);

  SpawnSetup setup;
  set_attributes(setup);
  std::error_code ec;
  const std::string stdin_path = spec.stdin_file.empty() ? "/dev/null" : fs::absolute(spec.stdin_file, ec).string();
  ::posix_spawn_file_actions_addopen(setup.actions(), STDIN_FILENO, stdin_path.c_str(), O_RDONLY, 0);
  if (!set_output(spec, setup, out, err))
    return std::unexpected(cannot_start(std::string("making pipes: ") + std::strerror(errno)));
  const std::string dir = spec.working_dir.string();
  if (!dir.empty()) ::posix_spawn_file_actions_addchdir_np(setup.actions(), dir.c_str());

  pid_t pid = 0;
  if (const int error =
          ::posix_spawn(&pid, program->c_str(), setup.actions(), setup.attr(), argv_ptrs.data(), env_ptrs.data());
      error != 0)
    return std::unexpected(ProcessError{
        .kind = ProcessErrorKind::not_found,
        .message = "starting '" + *program + "'" + (dir.empty() ? "" : " in " + dir) + ": " + std::strerror(error)});
  out.write.reset();
  err.write.reset();
  return pid;
}

}  // namespace

std::expected<ProcessResult, ProcessError> run_process(const ProcessSpec& spec) {
  Pipe out, err;
  const auto pid = spawn(spec, out, err);
  if (!pid) return std::unexpected(pid.error());
  return Watcher(spec, *pid, out.read.get(), err.read.get()).run();
}

std::expected<int, ProcessError> start_process(const ProcessSpec& spec) {
  if (spec.output == OutputMode::capture)
    return std::unexpected(
        cannot_start("start_process: output cannot be captured; pass it through, to a file or away"));
  Pipe out, err;
  return spawn(spec, out, err);
}

std::string shell_quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
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

}  // namespace orc::util
