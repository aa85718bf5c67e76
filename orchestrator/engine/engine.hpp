#pragma once
// What every engine (Docker API, Podman API, host, later Slurm) runs and
// hands back, with no knowledge of CUDA: DESIGN.md's BuildSpec and Engine.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/engine/archive.hpp"
#include "orchestrator/engine/error.hpp"
#include "orchestrator/engine/log_stream.hpp"

namespace orc::engine {

// Every container we create carries this label, so leftovers of a crashed
// run can be found and removed.
inline constexpr std::string_view k_managed_label = "org.orchestrate.managed";

enum class Access { read_only, read_write };

// A host path made visible in the container (a bind mount).
struct Mount {
  std::filesystem::path host;  // absolute; a symlink is resolved by the engine
  std::string container;       // absolute
  Access access = Access::read_only;
};

// Resource limits. nofile and nproc are always sent: an engine's defaults
// may exceed the host's hard limits (Podman's do here), and without
// CAP_SYS_RESOURCE the container then fails to start.
struct Limits {
  std::uint64_t nofile = 4096;  // soft = hard
  std::uint64_t nproc = 4096;   // soft = hard
  std::optional<std::uint64_t> memory_bytes;
  std::optional<double> cpus;
};

// A path to copy out of the container after it exits, before it is removed:
// the tree at `container_path` lands in `host_dir` under its own name
// (/build/out -> host_dir/out), like `docker cp` into an existing directory.
struct CopyOut {
  std::string container_path;
  std::filesystem::path host_dir;
};

// What a host-engine process inherits: a container starts from its image's
// environment whatever the caller holds; a host process by default from the
// caller's, and with `exact` from `env` alone, as a container would.
enum class HostEnvironment { inherit, exact };

struct BuildSpec {
  std::string image;              // reference or ID
  std::vector<std::string> argv;  // run as is, no shell; empty = the image's CMD
  std::vector<std::pair<std::string, std::string>> env;
  HostEnvironment host_env = HostEnvironment::inherit;
  std::vector<Mount> mounts;
  std::string working_dir;  // empty = the image's
  std::string user;         // "uid[:gid]" or a name; empty = the image's
  Limits limits;
  std::map<std::string, std::string> labels;
  std::string network = "none";  // builds get no network unless asked for
  bool tty = false;              // true merges stderr into stdout
  std::vector<CopyOut> outputs;
  std::string name;  // container name; empty = the engine picks one
};

struct RunResult {
  int exit_code = -1;
  std::string container_id;
  std::chrono::milliseconds duration{0};
  // One per BuildSpec::outputs, in order. A failed build usually leaves
  // its output paths missing, so these are reported, not raised.
  std::vector<std::expected<ExtractStats, Error>> outputs;
  bool removed = false;  // the container is gone
  // Why it is not: the run finished, but removing its container failed.
  std::optional<Error> removal_error;
};

// Set from a SIGINT/SIGTERM handler (see ScopedSignalCancel) or another
// thread; an engine polls it while it waits and then kills and removes
// what it started. Setting it is async-signal-safe.
class CancelFlag {
 public:
  // `signal`: the one that asked (SIGTERM, SIGINT), so a command can exit
  // with the shell's 128 + N; 0 for a request from code.
  void request(int signal = 0) noexcept {
    if (signal != 0) m_signal.store(signal);
    m_set.store(true);
  }
  bool requested() const noexcept { return m_set.load(); }
  int signal() const noexcept { return m_signal.load(); }
  const std::atomic<bool>* get() const noexcept { return &m_set; }

 private:
  static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler stores to it");
  static_assert(std::atomic<int>::is_always_lock_free, "a signal handler stores to it");
  std::atomic<bool> m_set{false};
  std::atomic<int> m_signal{0};
};

// Installs SIGINT and SIGTERM handlers that set `flag`, and restores the
// previous handlers when it goes. One may be active at a time.
class ScopedSignalCancel {
 public:
  explicit ScopedSignalCancel(CancelFlag& flag);
  ~ScopedSignalCancel();
  ScopedSignalCancel(const ScopedSignalCancel&) = delete;
  ScopedSignalCancel& operator=(const ScopedSignalCancel&) = delete;

 private:
  struct Saved;
  std::unique_ptr<Saved> m_saved;
};

class Engine {
 public:
  virtual ~Engine() = default;
  // "docker", "podman", "host".
  virtual std::string_view name() const = 0;
  // Runs the spec to completion, its output streamed to `log`, and removes
  // what it created on every path, exceptions included. A non-zero exit is
  // a RunResult; an Error means the run itself failed (image missing,
  // engine gone, cancelled).
  virtual std::expected<RunResult, Error> run(const BuildSpec& spec, LogSink& log) = 0;
  // Copies `path` out of an existing container into `dest` (rules and
  // layout as for BuildSpec::outputs).
  virtual std::expected<ExtractStats, Error> copy_out(std::string_view container, std::string_view path,
                                                      const std::filesystem::path& dest) = 0;
};

}  // namespace orc::engine
