#include "orchestrator/engine/host_engine.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

extern char** environ;

namespace orc::engine {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How long a cancelled process group gets between SIGTERM and SIGKILL.
constexpr auto k_kill_grace = std::chrono::seconds(3);

std::string rewrite_one(std::string_view piece, const std::vector<Mount>& mounts) {
  const Mount* best = nullptr;
  for (const auto& m : mounts) {
    const std::string_view c = m.container;
    const bool below = piece.size() > c.size() && piece.starts_with(c) && (piece[c.size()] == '/' || c == "/");
    if ((piece == c || below) && (!best || c.size() > best->container.size())) best = &m;
  }
  if (!best) return std::string(piece);
  return best->host.string() + std::string(piece.substr(best->container.size()));
}

std::string rewrite_list(std::string_view text, const std::vector<Mount>& mounts) {
  std::string out;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = text.find(':', start);
    out += rewrite_one(text.substr(start, colon == std::string_view::npos ? colon : colon - start), mounts);
    if (colon == std::string_view::npos) break;
    out += ':';
    start = colon + 1;
  }
  return out;
}

// The program as execve needs it: a path, searched on the child's PATH when
// the name has no '/'. Done before fork, where allocating is still allowed.
std::optional<std::string> find_program(const std::string& name, const std::string& path_list) {
  if (name.find('/') != std::string::npos) return name;
  std::size_t start = 0;
  while (start <= path_list.size()) {
    std::size_t colon = path_list.find(':', start);
    if (colon == std::string::npos) colon = path_list.size();
    const std::string dir = colon > start ? path_list.substr(start, colon - start) : ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
    start = colon + 1;
  }
  return std::nullopt;
}

Error io_error(std::string message) { return Error{.kind = ErrorKind::io, .message = std::move(message), .http_status = 0}; }

std::expected<ExtractStats, Error> copy_tree(const fs::path& from, const fs::path& dest_dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(from, ec)))
    return std::unexpected(Error{.kind = ErrorKind::not_found, .message = from.string() + ": no such file or directory", .http_status = 0});
  const fs::path target = dest_dir / from.filename();
  fs::create_directories(dest_dir, ec);
  fs::copy(from, target, fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing, ec);
  if (ec) return std::unexpected(io_error("copying " + from.string() + " to " + target.string() + ": " + ec.message()));
  ExtractStats stats;
  const auto count = [&stats](const fs::directory_entry& e) {
    if (e.is_symlink()) ++stats.symlinks;
    else if (e.is_directory()) ++stats.directories;
    else if (e.is_regular_file()) {
      ++stats.files;
      stats.bytes += e.file_size();
    }
  };
  count(fs::directory_entry(target));
  if (fs::is_directory(fs::symlink_status(target)))
    for (const auto& e : fs::recursive_directory_iterator(target, ec)) count(e);
  return stats;
}

class Pipe {
 public:
  Pipe() {
    if (::pipe2(m_fds, O_CLOEXEC) != 0) m_fds[0] = m_fds[1] = -1;
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  bool ok() const { return m_fds[0] >= 0; }
  int read_end() const { return m_fds[0]; }
  int write_end() const { return m_fds[1]; }
  void close_read() { close_fd(m_fds[0]); }
  void close_write() { close_fd(m_fds[1]); }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int m_fds[2] = {-1, -1};
};

}  // namespace

std::string rewrite_container_paths(std::string_view text, const std::vector<Mount>& mounts) {
  const std::size_t eq = text.find('=');
  if (eq != std::string_view::npos && eq > 0)
    return std::string(text.substr(0, eq + 1)) + rewrite_list(text.substr(eq + 1), mounts);
  return rewrite_list(text, mounts);
}

std::expected<RunResult, Error> HostEngine::run(const BuildSpec& spec, LogSink& log) {
  if (spec.argv.empty())
    return std::unexpected(Error{.kind = ErrorKind::invalid_spec, .message = "the host engine needs an argv (it has no image CMD)", .http_status = 0});
  const auto started = Clock::now();

  // The environment: ours, with the spec's on top, container paths rewritten.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos) env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  for (const auto& [name, value] : spec.env) env[name] = rewrite_list(value, spec.mounts);
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);

  std::vector<std::string> args;
  for (const auto& a : spec.argv) args.push_back(rewrite_container_paths(a, spec.mounts));
  const std::string dir = spec.working_dir.empty() ? std::string() : rewrite_one(spec.working_dir, spec.mounts);
  const auto program = find_program(args.front(), env.contains("PATH") ? env["PATH"] : std::string("/usr/bin:/bin"));
  if (!program)
    return std::unexpected(Error{.kind = ErrorKind::not_found, .message = "'" + args.front() + "' not found on PATH", .http_status = 0});

  log.on_output(OutputStream::err, "[host engine: local processes, not isolated] " + args.front() +
                                       (dir.empty() ? "" : " in " + dir) + "\n");

  std::vector<char*> argv_ptrs;
  for (auto& a : args) argv_ptrs.push_back(a.data());
  argv_ptrs.push_back(nullptr);
  std::vector<char*> env_ptrs;
  for (auto& e : env_strings) env_ptrs.push_back(e.data());
  env_ptrs.push_back(nullptr);

  Pipe out, err, exec_status;
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (!out.ok() || !err.ok() || !exec_status.ok() || devnull < 0) {
    if (devnull >= 0) ::close(devnull);
    return std::unexpected(io_error(std::string("making pipes: ") + std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(devnull);
    return std::unexpected(io_error(std::string("fork: ") + std::strerror(errno)));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only. Its own process group, so a
    // cancel reaches every process the step started.
    ::setpgid(0, 0);
    ::dup2(devnull, 0);
    ::dup2(out.write_end(), 1);
    ::dup2(err.write_end(), 2);
    int failed_errno = 0;
    if (!dir.empty() && ::chdir(dir.c_str()) != 0) failed_errno = errno;
    if (failed_errno == 0) {
      ::execve(program->c_str(), argv_ptrs.data(), env_ptrs.data());
      failed_errno = errno;
    }
    [[maybe_unused]] const auto n = ::write(exec_status.write_end(), &failed_errno, sizeof failed_errno);
    ::_exit(127);
  }
  ::close(devnull);
  out.close_write();
  err.close_write();
  exec_status.close_write();
  ::setpgid(pid, pid);  // also from here: whichever runs first, the group exists before a kill

  int child_errno = 0;
  const bool exec_failed = ::read(exec_status.read_end(), &child_errno, sizeof child_errno) == sizeof child_errno;

  pollfd fds[2] = {{out.read_end(), POLLIN, 0}, {err.read_end(), POLLIN, 0}};
  int open_fds = 2;
  std::optional<Clock::time_point> term_sent;
  char buffer[8192];
  while (open_fds > 0) {
    if (m_cancel && m_cancel->requested()) {
      if (!term_sent) {
        ::kill(-pid, SIGTERM);
        term_sent = Clock::now();
      } else if (Clock::now() - *term_sent > k_kill_grace) {
        ::kill(-pid, SIGKILL);
      }
    }
    const int ready = ::poll(fds, 2, 100);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        log.on_output(i == 0 ? OutputStream::out : OutputStream::err, std::string_view(buffer, static_cast<std::size_t>(n)));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exec_failed)
    return std::unexpected(Error{.kind = ErrorKind::not_found,
                                 .message = "starting '" + *program + "'" + (dir.empty() ? "" : " in " + dir) + ": " +
                                            std::strerror(child_errno),
                                 .http_status = 0});
  if (term_sent)
    return std::unexpected(Error{.kind = ErrorKind::cancelled, .message = "cancelled: the host process group was stopped", .http_status = 0});

  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.container_id = "host-" + std::to_string(pid);
  result.removed = true;
  for (const auto& o : spec.outputs) result.outputs.push_back(copy_tree(rewrite_one(o.container_path, spec.mounts), o.host_dir));
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return result;
}

std::expected<ExtractStats, Error> HostEngine::copy_out(std::string_view container, std::string_view, const std::filesystem::path&) {
  return std::unexpected(Error{.kind = ErrorKind::not_found,
                               .message = "the host engine keeps no containers ('" + std::string(container) + "')",
                               .http_status = 0});
}

}  // namespace orc::engine
