// The process runner against real programs (sh, printf, env, cat, sleep).
#include "orchestrator/util/process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "orchestrator/util/fs.hpp"

namespace orc::util {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

ProcessResult run(ProcessSpec spec) {
  auto result = run_process(spec);
  EXPECT_TRUE(result) << (result ? "" : result.error().message);
  return result ? *result : ProcessResult{};
}

// Gone, or a zombie its new parent has not reaped yet: not running.
bool process_gone(int pid) {
  for (int i = 0; i < 200; ++i) {
    const auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    const auto close = stat->rfind(')');
    if (close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] == 'Z') return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(Process, ReportsTheExitCode) {
  const auto r = run({.argv = {"sh", "-c", "echo out; echo err >&2; exit 7"}});
  ASSERT_TRUE(r.exit_code);
  EXPECT_EQ(*r.exit_code, 7);
  EXPECT_FALSE(r.signal);
  EXPECT_EQ(r.status(), 7);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Process, ReportsTheSignalThatEndedIt) {
  const auto r = run({.argv = {"sh", "-c", "kill -KILL $$"}});
  EXPECT_FALSE(r.exit_code);
  ASSERT_TRUE(r.signal);
  EXPECT_EQ(*r.signal, SIGKILL);
  EXPECT_EQ(r.status(), 128 + SIGKILL);
}

TEST(Process, PassesArgumentsVerbatimWithoutAShell) {
  const std::string hostile = "a; echo injected $(id -u) `id -u` > /tmp/x && '\"";
  const auto r = run({.argv = {"printf", "%s|", hostile, "$HOME", "*"}});
  EXPECT_EQ(r.out, hostile + "|$HOME|*|");
}

TEST(Process, ReplacesOrAddsToTheEnvironment) {
  ::setenv("ORC_PROCESS_TEST_PARENT", "inherited", 1);
  const auto replaced = run({.argv = {"/usr/bin/env"}, .env_mode = EnvMode::replace, .env = {{"ONLY", "this"}}});
  EXPECT_EQ(replaced.out, "ONLY=this\n");
  const auto added =
      run({.argv = {"/usr/bin/env"},
           .env = {{"ADDED", "1"}, {"ORC_PROCESS_TEST_PARENT", "first"}, {"ORC_PROCESS_TEST_PARENT", "won"}}});
  EXPECT_NE(added.out.find("ADDED=1\n"), std::string::npos);
  EXPECT_NE(added.out.find("ORC_PROCESS_TEST_PARENT=won\n"), std::string::npos) << "later entries win";
  EXPECT_NE(added.out.find("PATH="), std::string::npos) << "inherited";
  ::unsetenv("ORC_PROCESS_TEST_PARENT");
}

TEST(Process, SearchesTheChildsPath) {
  const fs::path dir = fs::temp_directory_path() / ("orc-process-path-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(write_file_atomic(dir / "orc-hello", "#!/bin/sh\necho hello from the childs PATH\n", {.mode = 0755}));
  const auto r = run({.argv = {"orc-hello"}, .env = {{"PATH", dir.string() + ":/usr/bin:/bin"}}});
  EXPECT_EQ(r.out, "hello from the childs PATH\n");
  const auto missing = run_process({.argv = {"orc-hello"}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ProcessErrorKind::not_found);
  EXPECT_EQ(missing.error().message, "'orc-hello' not found on PATH");
  fs::remove_all(dir);
}

TEST(Process, RunsInTheWorkingDirectoryWithStdinFromAFileOrClosed) {
  const fs::path dir = fs::temp_directory_path() / ("orc-process-cwd-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(write_file_atomic(dir / "in.txt", "line one\nline two\n"));
  const auto r = run({.argv = {"sh", "-c", "pwd; cat"}, .working_dir = dir, .stdin_file = dir / "in.txt"});
  EXPECT_EQ(r.out, fs::canonical(dir).string() + "\nline one\nline two\n");
  const auto closed = run({.argv = {"cat"}, .timeout = 10s});
  EXPECT_TRUE(closed.ok()) << "stdin is /dev/null: cat ends at once";
  EXPECT_EQ(closed.out, "");
  const auto no_dir = run_process({.argv = {"true"}, .working_dir = dir / "missing"});
  ASSERT_FALSE(no_dir);
  EXPECT_EQ(no_dir.error().kind, ProcessErrorKind::not_found);
  EXPECT_NE(no_dir.error().message.find("in " + (dir / "missing").string()), std::string::npos)
      << no_dir.error().message;
  fs::remove_all(dir);
}

TEST(Process, CapsWhatItCapturesAndStreamsEverything) {
  std::size_t streamed = 0;
  const auto r = run({.argv = {"sh", "-c", "head -c 100000 /dev/zero; printf END"},
                      .capture_cap = 1000,
                      .on_output = [&](OutputStream, std::string_view bytes) { streamed += bytes.size(); }});
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.out.ends_with("END")) << "the last bytes are kept";
  EXPECT_TRUE(r.out_truncated);
  EXPECT_EQ(streamed, 100003u);
  const auto none = run({.argv = {"printf", "abc"}, .capture_cap = 0});
  EXPECT_EQ(none.out, "");
  EXPECT_TRUE(none.out_truncated);
}

TEST(Process, MergesStderrIntoStdoutInOrder) {
  const auto r = run({.argv = {"sh", "-c", "echo 1; echo 2 >&2; echo 3"}, .merge_stderr = true});
  EXPECT_EQ(r.out, "1\n2\n3\n");
  EXPECT_EQ(r.err, "");
}

TEST(Process, CancelStopsTheWholeGroupGrandchildrenToo) {
  std::atomic<bool> cancel{false};
  std::string pid_text;
  const auto start = std::chrono::steady_clock::now();
  const auto r = run({.argv = {"sh", "-c", "sleep 300 & echo $!; wait"},
                      .on_output =
                          [&](OutputStream, std::string_view bytes) {
                            pid_text += bytes;
                            if (pid_text.ends_with('\n')) cancel = true;
                          },
                      .cancel = &cancel});
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  ASSERT_TRUE(r.signal);
  EXPECT_EQ(*r.signal, SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s) << "SIGTERM was enough: no wait for the grace";
  const int grandchild = std::atoi(pid_text.c_str());
  ASSERT_GT(grandchild, 0) << pid_text;
  EXPECT_TRUE(process_gone(grandchild)) << "sleep " << grandchild << " outlived the cancel";
}

TEST(Process, KillsAGroupThatIgnoresSigtermAfterTheGrace) {
  std::atomic<bool> cancel{false};
  std::string pid_text;
  const auto r = run({.argv = {"sh", "-c", "trap '' TERM; sleep 300 & echo $!; wait"},
                      .on_output =
                          [&](OutputStream, std::string_view bytes) {
                            pid_text += bytes;
                            if (pid_text.ends_with('\n')) cancel = true;
                          },
                      .cancel = &cancel,
                      .kill_grace = 200ms});
  EXPECT_TRUE(r.cancelled);
  ASSERT_TRUE(r.signal);
  EXPECT_EQ(*r.signal, SIGKILL);
  EXPECT_TRUE(process_gone(std::atoi(pid_text.c_str())));
}

TEST(Process, StopsAtTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run({.argv = {"sleep", "300"}, .timeout = 200ms});
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.cancelled);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Process, PassesOutputThroughAndStillReportsTheExit) {
  const auto r = run({.argv = {"sh", "-c", "exit 4"}, .output = OutputMode::inherit});
  EXPECT_EQ(r.status(), 4);
  EXPECT_EQ(r.out, "");
}

TEST(Process, StartsAServiceInItsOwnGroupWithItsOutputInAFile) {
  const fs::path log = fs::temp_directory_path() / ("orc-process-start-" + std::to_string(::getpid()) + ".log");
  const auto pid = start_process({.argv = {"sh", "-c", "echo started; echo on stderr >&2; exec sleep 300"},
                                  .output = OutputMode::file,
                                  .output_file = log});
  ASSERT_TRUE(pid) << pid.error().message;
  EXPECT_EQ(::getpgid(*pid), *pid) << "the leader of its own group";
  for (int i = 0; i < 200 && read_file(log).value_or("").find("on stderr") == std::string::npos; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(read_file(log).value_or(""), "started\non stderr\n");
  ASSERT_EQ(::kill(-*pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(*pid, &status, 0), *pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  fs::remove(log);
  const auto captured = start_process({.argv = {"true"}});
  ASSERT_FALSE(captured);
  EXPECT_EQ(captured.error().kind, ProcessErrorKind::cannot_start);
}

TEST(Process, QuotesArgvForMessages) {
  EXPECT_EQ(shell_quoted({"nvcc", "-gencode", "arch=compute_80,code=[sm_80]", "it's"}),
            "nvcc -gencode 'arch=compute_80,code=[sm_80]' 'it'\\''s'");
}

}  // namespace
}  // namespace orc::util
