// util/env: the one table of environment variables, every read through it,
// and docs/environment.md's table that must say the same.
#include "orchestrator/util/env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::util {
namespace {

namespace fs = std::filesystem;

TEST(Env, TableRowsAreCompleteAndUnique) {
  std::set<std::string_view> names;
  for (const auto& v : environment_variables()) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
    EXPECT_FALSE(v.meaning.empty()) << v.name;
    EXPECT_FALSE(v.default_value.empty()) << v.name;
    EXPECT_FALSE(v.read_by.empty()) << v.name;
    EXPECT_EQ(v.name.find('|'), std::string_view::npos);
    EXPECT_EQ(v.meaning.find('|'), std::string_view::npos) << "docs/environment.md's table could not hold it";
  }
  EXPECT_TRUE(names.contains("ORCHESTRATE_CACHE_DIR"));
  EXPECT_TRUE(names.contains("DOCKER_HOST"));
}

TEST(Env, ReadsOnlyWhatTheTableNames) {
  ::setenv("ORCHESTRATE_DEBIAN_MIRROR", "http://mirror.example/debian", 1);
  EXPECT_EQ(env_get("ORCHESTRATE_DEBIAN_MIRROR"), "http://mirror.example/debian");
  ::setenv("ORCHESTRATE_DEBIAN_MIRROR", "", 1);
  EXPECT_EQ(env_get("ORCHESTRATE_DEBIAN_MIRROR"), std::nullopt) << "empty reads as unset";
  EXPECT_EQ(env_value("ORCHESTRATE_DEBIAN_MIRROR"), "");
  ::unsetenv("ORCHESTRATE_DEBIAN_MIRROR");
  ::setenv("ORCHESTRATE_NOT_IN_TABLE", "x", 1);
  EXPECT_THROW(env_get("ORCHESTRATE_NOT_IN_TABLE"), std::logic_error);
}

TEST(Env, HelpListsEveryVariableWithinTheWidth) {
  const std::string help = render_environment_help(100);
  for (const auto& v : environment_variables())
    EXPECT_NE(help.find("  " + std::string(v.name) + " "), std::string::npos);
  for (const auto& line : split_any(help, "\n")) EXPECT_LE(line.size(), 100u) << line;
  const auto docker = help.find("  DOCKER_HOST ");
  ASSERT_NE(docker, std::string::npos);
  const std::string line = help.substr(docker, help.find('\n', docker) - docker);
  EXPECT_NE(line.find("Docker's engine socket (unix:// only). Default:"), std::string::npos) << line;
  EXPECT_NE(help.find("/var/run/docker.sock", docker), std::string::npos);
}

// docs/environment.md's table: `| `NAME` | meaning | default | read by |`.
std::map<std::string, std::string> docs_table() {
  const auto page = read_file(fs::path(ORC_SOURCE_DIR) / "docs" / "environment.md");
  EXPECT_TRUE(page);
  std::map<std::string, std::string> rows;
  const auto start = page->find("# Environment variables\n");
  EXPECT_NE(start, std::string::npos);
  if (start == std::string::npos) return rows;
  std::size_t at = page->find("\n| `", start);
  while (at != std::string::npos && page->compare(at, 4, "\n| `") == 0) {
    const std::size_t end = page->find('\n', at + 1);
    const std::string line = page->substr(at + 1, end - at - 1);
    const auto cells = split_any(line, "|");
    if (cells.size() >= 2) rows[std::string(trim(cells[0]))] = std::string(trim(cells[1]));
    at = end;
  }
  return rows;
}

TEST(Env, TheDocsTableSaysWhatTheTableSays) {
  const auto rows = docs_table();
  std::map<std::string, std::string> table;
  for (const auto& v : environment_variables()) table["`" + std::string(v.name) + "`"] = std::string(v.meaning);
  EXPECT_EQ(rows, table);
}

// Every read goes through env_get: no getenv elsewhere in the tool's code.
TEST(Env, NoOtherCodeCallsGetenv) {
  const fs::path root = fs::path(ORC_SOURCE_DIR) / "orchestrator";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const auto ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".hpp") continue;
    if (entry.path() == root / "util" / "env.cpp") continue;
    const auto text = read_file(entry.path());
    ASSERT_TRUE(text) << entry.path();
    // env.getenv( is the discovery seam's member, which env_get fills.
    for (auto at = text->find("getenv("); at != std::string::npos; at = text->find("getenv(", at + 1))
      EXPECT_TRUE(at > 0 && (*text)[at - 1] == '.') << entry.path() << " reads the environment itself";
  }
}

}  // namespace
}  // namespace orc::util
