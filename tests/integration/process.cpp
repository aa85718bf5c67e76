#include "tests/integration/process.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>

#include "orchestrator/util/process.hpp"

namespace orc::integration {

// Through util's one process runner: posix_spawn, close-on-exec pipes (the
// suites run commands from several threads), stdin closed, stdout and stderr
// interleaved as written.
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
  auto ran = util::run_process(
      {.argv = argv, .working_dir = cwd, .merge_stderr = true, .capture_cap = std::numeric_limits<std::size_t>::max()});
  if (!ran) return {.exit_code = -1, .output = "cannot start " + quoted(argv) + ": " + ran.error().message};
  return {.exit_code = ran->status(), .output = std::move(ran->out)};
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

std::string quoted(const std::vector<std::string>& argv) { return util::shell_quoted(argv); }

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
