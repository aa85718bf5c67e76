#include "orchestrator/imaging/rootfs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>

#include "orchestrator/imaging/mounts.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::imaging {

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

[[noreturn]] void fail(std::string message) { throw util::Failure(ExitCode::outside_failure, std::move(message)); }

// A system tool by name: root's tools live in /usr/sbin, which a non-login
// PATH may lack.
std::string find_tool(std::string_view name) {
  std::vector<std::string> dirs = util::split_any(util::env_value("PATH"), ":");
  for (const char* extra : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) dirs.emplace_back(extra);
  for (const auto& dir : dirs) {
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  fail(std::string(name) + " is not installed (apt-get install " +
       (name == "debootstrap" ? "debootstrap" : "coreutils tar") + ")");
}

// A step's output (stdout and stderr as written) and how it ended.
struct Step {
  int exit_code = -1;  // 128 + signal when killed
  std::string output;  // the last k_kept_output bytes
  std::chrono::milliseconds duration{0};
};

// Runs one system tool; its output is appended to `log` when one is given,
// and read for progress by `progress` when one is.
Step run_step(std::vector<std::string> argv, std::vector<std::string> env = {}, const fs::path& log = {},
              ToolProgress* progress = nullptr) {
  util::ProcessSpec spec{.argv = std::move(argv), .merge_stderr = true, .capture_cap = k_kept_output};
  if (!env.empty()) {
    spec.env_mode = util::EnvMode::replace;
    for (const auto& entry : env) {
      const auto eq = entry.find('=');
      spec.env.emplace_back(entry.substr(0, eq), eq == std::string::npos ? "" : entry.substr(eq + 1));
    }
  }
  std::ofstream log_file;
  if (!log.empty()) {
    log_file.open(log, std::ios::app | std::ios::binary);
    spec.on_output = [&log_file, progress](util::OutputStream, std::string_view bytes) {
      log_file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (progress) progress->feed(bytes);
    };
  }
  const std::string name = spec.argv.front();
  auto ran = util::run_process(spec);
  if (!ran) return Step{.exit_code = -1, .output = "cannot start " + name + ": " + ran.error().message};
  return Step{.exit_code = ran->status(), .output = std::move(ran->out), .duration = ran->duration};
}

std::string log_hint(const Step& r, const fs::path& log) {
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
  if (auto env = util::env_get("ORCHESTRATE_DEBIAN_MIRROR")) return *env;
  const std::string sources = util::read_file("/etc/apt/sources.list.d/debian.sources").value_or("");
  for (const auto& line : util::split_any(sources, "\n")) {
    const std::string_view trimmed = util::trim(line);
    if (!trimmed.starts_with("URIs:")) continue;
    const auto words = util::split_any(trimmed.substr(5), " \t");
    if (!words.empty()) return words.front();
  }
  const std::string list = util::read_file("/etc/apt/sources.list").value_or("");
  for (const auto& line : util::split_any(list, "\n")) {
    const auto words = util::split_any(line, " \t");
    if (words.empty() || words.front() != "deb") continue;
    for (const auto& w : words)
      if (w.find("://") != std::string::npos) return w;
  }
  return std::nullopt;
}

namespace {

// The log of one step, beside the tar: "<stem>.<step>.log".
fs::path step_log(const RootfsJob& job, std::string_view step) {
  return job.tar.parent_path() / (job.tar.stem().string() + "." + std::string(step) + ".log");
}

std::chrono::milliseconds debootstrap(const RootfsJob& job, const fs::path& root, std::ostream& progress) {
  const compat::OfflineImage& image = *job.image;
  const fs::path log = step_log(job, "debootstrap");
  progress << "images: debootstrap " << image.suite << " (minbase; " << image.components << ") from " << job.mirror
           << std::endl;
  ToolProgress tool(progress, job.progress);
  const Step boot =
      run_step({find_tool("debootstrap"), "--variant=minbase", "--components=" + std::string(image.components),
                std::string(image.suite), root.string(), job.mirror},
               {}, log, &tool);
  tool.finish();
  if (boot.exit_code != 0)
    fail("debootstrap of " + std::string(image.suite) + " from the mirror " + job.mirror +
         " failed: check the mirror (ORCHESTRATE_DEBIAN_MIRROR or the host's apt sources)" + log_hint(boot, log));
  progress << "images: debootstrap done in " << seconds(boot.duration) << " s" << std::endl;
  return boot.duration;
}

// setup.sh in the chroot with proc mounted, then the catalog's packages'
// versions as dpkg has them.
std::chrono::milliseconds setup(const RootfsJob& job, const fs::path& root, std::vector<std::string>& packages,
                                std::ostream& progress) {
  const compat::OfflineImage& image = *job.image;
  const fs::path setup_dir = root / fs::path(k_setup_dir).relative_path();
  fs::create_directories(setup_dir);
  for (const auto& [file, text] : {std::pair{"common.sh", &job.scripts->common}, {"setup.sh", &job.scripts->setup}})
    if (auto written = util::write_file_atomic(setup_dir / file, *text); !written)
      fail("cannot write the setup scripts into the rootfs: " + written.error().message);

  progress << "images: setup.sh in the chroot (apt-get install " << image.packages.size() << " packages)" << std::endl;
  const std::string chroot = find_tool("chroot");
  const fs::path log = step_log(job, "setup");
  Step ran;
  {
    const ProcMount proc(root);
    ToolProgress tool(progress, job.progress);
    ran = run_step({chroot, root.string(), "/bin/sh", std::string(k_setup_dir) + "/setup.sh"},
                   chroot_env(image, job.mirror), log, &tool);
    tool.finish();
  }
  if (ran.exit_code != 0)
    fail("images/offline/" + std::string(image.name) + "/setup.sh (" + job.scripts->origin + ") failed in the chroot" +
         log_hint(ran, log));
  progress << "images: setup done in " << seconds(ran.duration) << " s" << std::endl;

  std::vector<std::string> query = {chroot, root.string(), "dpkg-query", "-W", "-f=${Package}=${Version}\\n"};
  for (auto p : image.packages) query.emplace_back(p);
  const Step versions = run_step(query, {std::string(k_chroot_path), "LC_ALL=C"});
  if (versions.exit_code != 0) fail("dpkg-query in the new rootfs failed:\n" + last_lines(versions.output, 10));
  packages = util::split_any(versions.output, "\n");
  fs::remove_all(setup_dir);
  return ran.duration;
}

// A kept tar is a cache: it is synced before its rename, so a crash never
// leaves a truncated one that a later build would take for complete. One
// made for the import alone is removed after it, and needs no sync.
std::chrono::milliseconds write_tar(const RootfsJob& job, const fs::path& root, std::ostream& progress) {
  const fs::path partial = job.tar.string() + ".partial";
  const auto start = Clock::now();
  progress << "images: writing the rootfs tar " << job.tar.string() << std::endl;
  const Step tar = run_step({find_tool("tar"), "--numeric-owner", "-C", root.string(), "-cf", partial.string(), "."});
  if (tar.exit_code != 0) {
    fs::remove(partial);
    fail("tar of the rootfs failed:\n" + last_lines(tar.output, 10));
  }
  if (job.keep) {
    const int fd = ::open(partial.c_str(), O_RDONLY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::fsync(fd) == 0;
    const std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    if (!synced) fail("cannot sync " + partial.string() + ": " + reason);
  }
  fs::rename(partial, job.tar);
  if (job.keep) util::fsync_dir(job.tar.parent_path());
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  progress << "images: rootfs tar (" << fs::file_size(job.tar) / (1024 * 1024) << " MiB) written"
           << (job.keep ? " and synced" : "") << " in " << seconds(took) << " s" << std::endl;
  return took;
}

RootfsResult make_rootfs(const RootfsJob& job, std::ostream& progress) {
  RootfsResult result;
  remove_work_dir(job.work);
  fs::create_directories(job.work);
  const fs::path root = job.work / "rootfs";
  for (const auto* step : {"debootstrap", "setup"}) fs::remove(step_log(job, step));
  result.debootstrap = debootstrap(job, root, progress);
  result.setup = setup(job, root, result.packages, progress);
  result.tar = write_tar(job, root, progress);
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

}  // namespace orc::imaging
