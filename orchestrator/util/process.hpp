#pragma once
// The one way this tool starts a program: argv without a shell (an argument
// holding ';' or '$(...)' reaches the program verbatim), an environment that
// is inherited, replaced or added to, a working directory, stdin from a file
// or closed, stdout and stderr captured (keeping the last `capture_cap`
// bytes), streamed to a callback or passed through, and a stop on cancel or
// timeout that reaches the whole process group (grandchildren included).
//
// posix_spawn rather than fork: the tool and its tests start processes from
// several threads, and a forked child of a threaded process may only call
// async-signal-safe functions. Every pipe is close-on-exec, so a sibling
// started by another thread never holds this child's pipe open.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <expected>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orc::util {

enum class EnvMode {
  inherit,  // this process's environment, with `vars` on top
  replace,  // `vars` only
};

enum class OutputMode {
  capture,  // pipes: kept (up to the cap) and handed to on_output
  inherit,  // the child writes to this process's stdout and stderr
  file,     // stdout and stderr into output_file (created or truncated)
  discard,  // stdout and stderr to /dev/null
};

enum class OutputStream { out, err };

struct ProcessSpec {
  // argv[0] is searched on the child's PATH when it has no '/'.
  std::vector<std::string> argv;
  EnvMode env_mode = EnvMode::inherit;
  std::vector<std::pair<std::string, std::string>> env;  // later entries win
  std::filesystem::path working_dir;                     // empty: ours
  std::filesystem::path stdin_file;                      // empty: /dev/null
  OutputMode output = OutputMode::capture;
  std::filesystem::path output_file;  // for OutputMode::file
  // stderr into stdout's pipe, interleaved as written (ProcessResult::out).
  bool merge_stderr = false;
  // Bytes of each stream kept in the result, the last ones; 0 keeps none.
  std::size_t capture_cap = std::size_t{16} << 20;
  // Every chunk as it arrives, in capture mode.
  std::function<void(OutputStream, std::string_view)> on_output;
  // Polled while the child runs: once true, the group gets SIGTERM, then
  // SIGKILL after `kill_grace`.
  const std::atomic<bool>* cancel = nullptr;
  std::optional<std::chrono::milliseconds> timeout;
  std::chrono::milliseconds kill_grace{3000};
};

struct ProcessResult {
  std::optional<int> exit_code;  // set when the child exited
  std::optional<int> signal;     // set when a signal ended it
  bool cancelled = false;        // stopped because `cancel` was set
  bool timed_out = false;        // stopped because `timeout` passed
  std::string out;               // stdout (and stderr when merged)
  std::string err;
  bool out_truncated = false;  // more than capture_cap bytes came
  bool err_truncated = false;
  int pid = 0;
  std::chrono::milliseconds duration{0};

  bool ok() const { return exit_code == 0; }
  // The shell's convention: the exit code, else 128 + the signal.
  int status() const { return exit_code ? *exit_code : 128 + signal.value_or(0); }
};

enum class ProcessErrorKind {
  not_found,    // argv[0] is not on PATH, or the working directory is missing
  cannot_start  // pipes, spawn
};

struct ProcessError {
  ProcessErrorKind kind;
  std::string message;  // "'nvcc' not found on PATH", "starting 'x' in /d: ..."
};

// Runs `spec` to its end (or its stop) and reaps it and its group.
std::expected<ProcessResult, ProcessError> run_process(const ProcessSpec& spec);

// Starts `spec` and returns at once with the child's pid, the leader of its
// own process group: for a service a test runs beside its cases. The caller
// reaps it (waitpid) and stops it (kill(-pid, ...)); cancel and timeout do
// not apply. Output cannot be captured (nobody would read the pipes).
std::expected<int, ProcessError> start_process(const ProcessSpec& spec);

// `name` on `path_list` (':'-separated; an empty piece is "."), as execve
// needs it; a name with a '/' is returned as it is.
std::optional<std::string> find_program(const std::string& name, std::string_view path_list);

// "nvcc -gencode 'arch=compute_80,code=[sm_80]' k.cu": argv as a shell
// would need it, for messages.
std::string shell_quoted(const std::vector<std::string>& argv);

}  // namespace orc::util
