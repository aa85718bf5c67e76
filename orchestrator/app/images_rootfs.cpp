#include "orchestrator/app/images_detail.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

extern char** environ;

namespace orc::app::images_detail {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using util::ExitCode;

namespace {

constexpr std::size_t k_kept_output = 64 * 1024;
// The chroot's environment: nothing of ours leaks in (proxy settings, a
// locale the minbase system lacks).
constexpr std::string_view k_chroot_path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
// Inside the rootfs, where setup.sh and common.sh are copied for the run.
constexpr std::string_view k_setup_dir = "/tmp/orchestrate-setup";

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

[[noreturn]] void fail(std::string message) { throw util::Failure(ExitCode::outside_failure, std::move(message)); }

// A system tool by name: root's tools live in /usr/sbin, which a non-login
// PATH may lack.
std::string find_tool(std::string_view name) {
  std::vector<std::string> dirs = util::split_any(std::getenv("PATH") ? std::getenv("PATH") : "", ":");
  for (const char* extra : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) dirs.emplace_back(extra);
  for (const auto& dir : dirs) {
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  fail(std::string(name) + " is not installed (apt-get install " +
       (name == "debootstrap" ? "debootstrap" : "coreutils tar") + ")");
}

std::string log_hint(const CommandResult& r, const fs::path& log) {
  return " (exit " + std::to_string(r.exit_code) + "; log: " + log.string() + "); last lines:\n" +
         last_lines(r.output, 15);
}

std::vector<std::string> chroot_env(const compat::OfflineImage& image, const std::string& mirror) {
  std::string packages;
  for (auto p : image.packages) packages += (packages.empty() ? "" : " ") + std::string(p);
  return {std::string(k_chroot_path),
          "HOME=/root",
          "LC_ALL=C",
          "DEBIAN_FRONTEND=noninteractive",
          "ORC_MIRROR=" + mirror,
          "ORC_SUITE=" + std::string(image.suite),
          "ORC_COMPONENTS=" + std::string(image.components),
          "ORC_PACKAGES=" + packages};
}

}  // namespace

CommandResult run_command(const Command& command) {
  const auto start = Clock::now();
  CommandResult result;
  std::vector<char*> args;
  for (const auto& a : command.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : command.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  Fd read_end(ends[0]), write_end(ends[1]);
  Fd log(command.log.empty() ? -1 : ::open(command.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));

  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  pid_t pid = 0;
  const int error =
      ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), command.env.empty() ? environ : envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  if (error != 0) {
    result.output = "cannot start " + command.argv[0] + ": " + std::strerror(error);
    return result;
  }
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (log.get() >= 0 && ::write(log.get(), buffer, static_cast<std::size_t>(n)) < 0) log.reset();
    result.output.append(buffer, static_cast<std::size_t>(n));
    if (result.output.size() > 2 * k_kept_output) result.output.erase(0, result.output.size() - k_kept_output);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (result.output.size() > k_kept_output) result.output.erase(0, result.output.size() - k_kept_output);
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return result;
}

std::string last_lines(std::string_view text, std::size_t n) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (!util::trim(line).empty()) lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += (out.empty() ? "  " : "\n  ") + std::string(lines[i]);
  return out;
}

std::string seconds(std::chrono::milliseconds duration) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << static_cast<double>(duration.count()) / 1000.0;
  return out.str();
}

std::optional<std::string> debian_mirror() {
  if (const char* env = std::getenv("ORCHESTRATE_DEBIAN_MIRROR"); env && *env) return std::string(env);
  std::ifstream sources("/etc/apt/sources.list.d/debian.sources");
  for (std::string line; std::getline(sources, line);) {
    const std::string_view trimmed = util::trim(line);
    if (!trimmed.starts_with("URIs:")) continue;
    const auto words = util::split_any(trimmed.substr(5), " \t");
    if (!words.empty()) return words.front();
  }
  std::ifstream list("/etc/apt/sources.list");
  for (std::string line; std::getline(list, line);) {
    const auto words = util::split_any(line, " \t");
    if (words.empty() || words.front() != "deb") continue;
    for (const auto& w : words)
      if (w.find("://") != std::string::npos) return w;
  }
  return std::nullopt;
}

ProcMount::ProcMount(const fs::path& root) : m_target(root / "proc") {
  std::error_code ec;
  fs::create_directories(m_target, ec);
  if (::mount("proc", m_target.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    fail("cannot mount proc on " + m_target.string() + ": " + std::strerror(errno));
}

ProcMount::~ProcMount() {
  if (::umount2(m_target.c_str(), 0) != 0) ::umount2(m_target.c_str(), MNT_DETACH);
}

void remove_work_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  const std::string prefix = fs::weakly_canonical(dir, ec).string() + "/";
  // Field 5 of mountinfo is the mount point.
  std::vector<std::string> mounts;
  std::ifstream info("/proc/self/mountinfo");
  for (std::string line; std::getline(info, line);) {
    const auto fields = util::split_any(line, " ");
    if (fields.size() > 4 && fields[4].starts_with(prefix)) mounts.push_back(fields[4]);
  }
  std::ranges::sort(mounts, std::greater<>());
  for (const auto& m : mounts)
    if (::umount2(m.c_str(), 0) != 0 && ::umount2(m.c_str(), MNT_DETACH) != 0)
      fail("cannot unmount " + m + " (left by an interrupted build): " + std::strerror(errno));
  fs::remove_all(dir, ec);
  if (ec) fail("cannot remove " + dir.string() + ": " + ec.message());
}

namespace {

RootfsResult make_rootfs(const RootfsJob& job, std::ostream& progress) {
  const compat::OfflineImage& image = *job.image;
  RootfsResult result;
  remove_work_dir(job.work);
  fs::create_directories(job.work);
  const fs::path root = job.work / "rootfs";
  const fs::path logs = job.tar.parent_path();
  const std::string stem = job.tar.stem().string();
  const fs::path debootstrap_log = logs / (stem + ".debootstrap.log");
  const fs::path setup_log = logs / (stem + ".setup.log");
  for (const auto& log : {debootstrap_log, setup_log}) fs::remove(log);

  progress << "images: debootstrap " << image.suite << " (minbase; " << image.components << ") from " << job.mirror
           << std::endl;
  const CommandResult boot = run_command(
      {.argv = {find_tool("debootstrap"), "--variant=minbase", "--components=" + std::string(image.components),
                std::string(image.suite), root.string(), job.mirror},
       .log = debootstrap_log});
  if (boot.exit_code != 0)
    fail("debootstrap of " + std::string(image.suite) + " from the mirror " + job.mirror +
         " failed: check the mirror (ORCHESTRATE_DEBIAN_MIRROR or the host's apt sources)" +
         log_hint(boot, debootstrap_log));
  result.debootstrap = boot.duration;
  progress << "images: debootstrap done in " << seconds(boot.duration) << " s" << std::endl;

  const fs::path setup_dir = root / fs::path(k_setup_dir).relative_path();
  fs::create_directories(setup_dir);
  fs::copy_file(job.scripts / "common.sh", setup_dir / "common.sh", fs::copy_options::overwrite_existing);
  fs::copy_file(job.scripts / image.name / "setup.sh", setup_dir / "setup.sh", fs::copy_options::overwrite_existing);

  progress << "images: setup.sh in the chroot (apt-get install " << image.packages.size() << " packages)" << std::endl;
  const std::string chroot = find_tool("chroot");
  CommandResult setup;
  {
    const ProcMount proc(root);
    setup = run_command({.argv = {chroot, root.string(), "/bin/sh", std::string(k_setup_dir) + "/setup.sh"},
                         .env = chroot_env(image, job.mirror),
                         .log = setup_log});
  }
  if (setup.exit_code != 0)
    fail("images/offline/" + std::string(image.name) + "/setup.sh failed in the chroot" + log_hint(setup, setup_log));
  result.setup = setup.duration;
  progress << "images: setup done in " << seconds(setup.duration) << " s" << std::endl;

  std::vector<std::string> query = {chroot, root.string(), "dpkg-query", "-W", "-f=${Package}=${Version}\\n"};
  for (auto p : image.packages) query.emplace_back(p);
  const CommandResult versions = run_command({.argv = query, .env = {std::string(k_chroot_path), "LC_ALL=C"}});
  if (versions.exit_code != 0) fail("dpkg-query in the new rootfs failed:\n" + last_lines(versions.output, 10));
  result.packages = util::split_any(versions.output, "\n");
  fs::remove_all(setup_dir);

  const fs::path partial = job.tar.string() + ".partial";
  const auto tar_start = Clock::now();
  const CommandResult tar =
      run_command({.argv = {find_tool("tar"), "--numeric-owner", "-C", root.string(), "-cf", partial.string(), "."}});
  if (tar.exit_code != 0) {
    fs::remove(partial);
    fail("tar of the rootfs failed:\n" + last_lines(tar.output, 10));
  }
  {
    // The tar is the cache: a crash after the rename must not leave a
    // truncated one that a later build would take for complete.
    Fd fd(::open(partial.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0 || ::fsync(fd.get()) != 0) fail("cannot sync " + partial.string() + ": " + std::strerror(errno));
  }
  fs::rename(partial, job.tar);
  result.tar = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - tar_start);
  progress << "images: rootfs tar " << job.tar.string() << " (" << fs::file_size(job.tar) / (1024 * 1024)
           << " MiB) written and synced in " << seconds(result.tar) << " s" << std::endl;
  return result;
}

}  // namespace

RootfsResult make_rootfs_tar(const RootfsJob& job, std::ostream& progress) {
  // The rootfs is scratch on success and on failure alike (the logs beside
  // the tar say what happened): a failed 11.8 tree is gigabytes.
  try {
    RootfsResult result = make_rootfs(job, progress);
    const auto start = Clock::now();
    remove_work_dir(job.work);
    progress << "images: scratch rootfs removed in "
             << seconds(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start)) << " s"
             << std::endl;
    return result;
  } catch (...) {
    try {
      remove_work_dir(job.work);
    } catch (const util::Failure&) {
      // The first failure is the one to report.
    }
    throw;
  }
}

}  // namespace orc::app::images_detail
