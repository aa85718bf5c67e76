#pragma once
// Runs real tools (nvcc, cmake) for the integration suites: argv in, exit
// status and merged stdout+stderr out. No shell is involved, so arguments
// need no quoting; quoted() renders a command line for failure messages.
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orc::integration {

struct ProcessResult {
  // The exit status, or 128 + signal number when the child was killed (the
  // shell's convention), or -1 when it could not be started.
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved as written
};

// Runs argv[0] (looked up on PATH when it has no '/') in `cwd` (unchanged
// when empty) and waits for it.
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd = {});

// Runs every command, at most `jobs` at a time; results in command order.
std::vector<ProcessResult> run_parallel(std::span<const std::vector<std::string>> commands, unsigned jobs);

// "nvcc -gencode 'arch=compute_80,code=[sm_80]' k.cu": argv as a shell would
// need it, for messages.
std::string quoted(const std::vector<std::string>& argv);

// A fresh directory under the system temp directory, removed with its
// contents when the object goes.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

// The value of environment variable `name`, or `fallback` when unset or empty.
std::string env_or(const char* name, std::string fallback);

}  // namespace orc::integration
