#include "orchestrator/util/file_lock.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::util {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "orc-lock-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp");
  return pattern;
}

// A second process blocks until the first lets go, says what it waits for,
// and gets the lock afterwards: the property two parallel image builds rely on.
TEST(FileLock, SecondProcessWaitsForTheFirst) {
  const fs::path dir = temp_dir();
  const fs::path lock_path = dir / "sub" / "entry.lock";
  // The child forks before the parent locks: a child forked while the lock
  // is held inherits the locked descriptor and would hold the lock itself.
  int result_pipe[2];
  int go_pipe[2];
  ASSERT_EQ(::pipe(result_pipe), 0);
  ASSERT_EQ(::pipe(go_pipe), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(result_pipe[0]);
    ::close(go_pipe[1]);
    char go = 0;
    if (::read(go_pipe[0], &go, 1) != 1) ::_exit(2);
    std::ostringstream progress;
    const FileLock mine(lock_path, progress);
    const std::string said = "locked;" + progress.str();
    const auto written = ::write(result_pipe[1], said.data(), said.size());
    ::_exit(written == static_cast<ssize_t>(said.size()) ? 0 : 1);
  }
  ::close(result_pipe[1]);
  ::close(go_pipe[0]);
  std::ostringstream quiet;
  std::optional<FileLock> held(std::in_place, lock_path, quiet);
  EXPECT_EQ(quiet.str(), "") << "an uncontended lock says nothing";
  EXPECT_TRUE(fs::exists(lock_path));
  ASSERT_EQ(::write(go_pipe[1], "g", 1), 1);
  ::close(go_pipe[1]);
  // While the parent holds the lock the child cannot have written anything.
  pollfd pfd{.fd = result_pipe[0], .events = POLLIN, .revents = 0};
  EXPECT_EQ(::poll(&pfd, 1, 300), 0) << "the child got the lock while the parent held it";
  held.reset();

  std::string got;
  char buf[512];
  for (ssize_t n; (n = ::read(result_pipe[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(result_pipe[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(got.starts_with("locked;")) << got;
  EXPECT_NE(got.find("waiting for " + lock_path.string()), std::string::npos) << got;
  fs::remove_all(dir);
}

TEST(FileLock, UncreatableLockFileIsAnOutsideFailure) {
  const fs::path dir = temp_dir();
  // A regular file where the lock's directory should be.
  { std::ofstream(dir / "file") << "x"; }
  std::ostringstream progress;
  try {
    const FileLock lock(dir / "file" / "x.lock", progress);
    FAIL() << "locked a path under a regular file";
  } catch (const Failure& f) {
    EXPECT_EQ(f.code(), ExitCode::outside_failure);
    EXPECT_NE(std::string(f.what()).find("cannot open the lock file"), std::string::npos) << f.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orc::util
