#pragma once
// The insides of `orchestrate images` (private to the app module): running
// the system tools that make a root file system (debootstrap, chroot, tar)
// with their output in a log file, the proc mount the chroot needs (undone
// on every path out), and finding the engine.
#include <chrono>
#include <expected>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/compat/image_catalog.hpp"

namespace orc::app::images_detail {

struct Command {
  std::vector<std::string> argv;  // argv[0] looked up on PATH when it has no '/'
  // "NAME=value" entries that replace the environment; empty = inherit ours.
  std::vector<std::string> env;
  // Output (stdout and stderr) is appended here when set, else only kept.
  std::filesystem::path log;
};

struct CommandResult {
  // The exit status, 128 + signal when killed, -1 when it could not start.
  int exit_code = -1;
  std::string output;  // the last 64 KiB of stdout and stderr
  std::chrono::milliseconds duration{0};
};

CommandResult run_command(const Command& command);

// The last `n` non-blank lines of `text`, each indented by two spaces and
// joined by newlines (none after the last), for messages.
std::string last_lines(std::string_view text, std::size_t n);

// Seconds with one decimal: "65.3".
std::string seconds(std::chrono::milliseconds duration);

// The Debian mirror: ORCHESTRATE_DEBIAN_MIRROR, else the first URIs: line of
// /etc/apt/sources.list.d/debian.sources, else the first `deb` URL of
// /etc/apt/sources.list. Read at run time, never stored in the repository.
std::optional<std::string> debian_mirror();

// Mounts proc on ROOT/proc and unmounts it when it goes, so a failed chroot
// step never leaves a mount under the cache.
class ProcMount {
 public:
  explicit ProcMount(const std::filesystem::path& root);
  ~ProcMount();
  ProcMount(const ProcMount&) = delete;
  ProcMount& operator=(const ProcMount&) = delete;

 private:
  std::filesystem::path m_target;
};

// Unmounts everything mounted under `dir` (deepest first), then removes it:
// a run killed mid-chroot leaves proc mounted in its work directory, and
// removing through a mounted proc must never happen.
void remove_work_dir(const std::filesystem::path& dir);

// The engine's socket: `given`, else discovery (DOCKER_HOST, the Docker and
// Podman sockets). The error says where it looked.
std::expected<std::filesystem::path, std::string> engine_socket(const std::optional<std::filesystem::path>& given);

// UTC now as RFC 3339 ("2026-11-30T10:00:00Z").
std::string utc_now();

// What make_rootfs_tar needs: the catalog entry, where its setup scripts
// are, where to work, and the tar to write.
struct RootfsJob {
  const compat::OfflineImage* image = nullptr;
  std::string mirror;
  std::filesystem::path scripts;  // images/offline: common.sh and <name>/setup.sh
  std::filesystem::path work;     // scratch (the rootfs itself), removed after
  std::filesystem::path tar;      // written atomically
};

struct RootfsResult {
  std::vector<std::string> packages;  // "name=version" of the catalog's packages
  std::chrono::milliseconds debootstrap{0};
  std::chrono::milliseconds setup{0};
  std::chrono::milliseconds tar{0};
};

// debootstrap (minbase, the image's suite and components, from the mirror)
// -> setup.sh in a chroot with proc mounted -> the package versions ->
// `tar --numeric-owner` of the tree. Progress lines go to `progress`. A
// failed step throws util::Failure (outside_failure) naming the step, with
// the last lines of its log (kept beside the tar).
RootfsResult make_rootfs_tar(const RootfsJob& job, std::ostream& progress);

}  // namespace orc::app::images_detail
