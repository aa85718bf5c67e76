// The real binary's start-up (bench/startup.sh times it): the libraries the
// dynamic loader reports loading (LD_DEBUG=files), for `--version` and for a
// command that needs SQLite.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

// The sonames that ld.so says it loaded while `command` ran (its stderr
// with LD_DEBUG=files), and the command's exit status.
std::set<std::string> loaded_by(const std::string& command, int& status) {
  const std::string shell = "LD_DEBUG=files " + command + " 2>&1 >/dev/null";
  FILE* pipe = ::popen(shell.c_str(), "r");
  std::string text;
  char buffer[4096];
  for (std::size_t n; pipe && (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  status = pipe ? ::pclose(pipe) : -1;
  std::set<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("file=");
    if (at == std::string::npos) continue;
    const auto end = line.find_first_of(" [", at + 5);
    names.insert(line.substr(at + 5, end - at - 5));
  }
  return names;
}

TEST(Startup, VersionLoadsOnlyLibcAndLibm) {
  int status = -1;
  const auto names = loaded_by(std::string(ORC_BINARY) + " --version", status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(names, (std::set<std::string>{"libc.so.6", "libm.so.6"}));
}

TEST(Startup, ACommandLoadsTheLibraryItNeedsWhenItRuns) {
  const fs::path store = fs::temp_directory_path() / ("orc-lazy-store-" + std::to_string(::getpid()));
  int status = -1;
  const auto names = loaded_by("ORCHESTRATE_CACHE_DIR=" + store.string() + " " + ORC_BINARY + " cache ls", status);
  fs::remove_all(store);
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(names.contains("libsqlite3.so.0")) << "the index is SQLite";
  EXPECT_FALSE(names.contains("libcurl.so.4")) << "cache ls speaks no HTTP";
}

}  // namespace
