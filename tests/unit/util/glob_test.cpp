#include "orchestrator/util/glob.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace orc::util {
namespace {

namespace fs = std::filesystem;

// Every name in `matches` matches `pattern`, and none in `misses` does.
void expect_glob(std::string_view pattern, std::initializer_list<std::string_view> matches,
                 std::initializer_list<std::string_view> misses) {
  for (const auto name : matches) EXPECT_TRUE(glob_match(pattern, name)) << pattern << " should match " << name;
  for (const auto name : misses) EXPECT_FALSE(glob_match(pattern, name)) << pattern << " should not match " << name;
}

TEST(GlobMatch, StarAndQuestionMarkStayInsideTheName) {
  expect_glob("*.so", {"libx.so", "a.b.so"}, {"libx.so.1", "libx.sox"});
  expect_glob("lib*.so*", {"libx.so.1", "lib.so"}, {"xlib.so"});
  expect_glob("lib?.a", {"libk.a"}, {"lib.a", "libkk.a"});
  expect_glob("a*b*c", {"abc", "aXbYbZc"}, {"aXbYbZ"});
  expect_glob("*", {"x", "saxpy"}, {});
  expect_glob("saxpy", {"saxpy"}, {"saxpy2", "Saxpy"});
}

TEST(GlobMatch, ManyStarsAreNotExponential) {
  // Backtracking into every star would take ~2^30 steps here.
  const std::string stars_then_b = [] {
    std::string p;
    for (int i = 0; i < 30; ++i) p += "*a";
    return p;
  }();
  const std::string name(60, 'a');
  EXPECT_FALSE(glob_match(stars_then_b + "*b", name));
  EXPECT_TRUE(glob_match(stars_then_b, name));
}

TEST(GlobMatch, BracketSetsRangesAndNegation) {
  expect_glob("sm_[89]0", {"sm_80", "sm_90"}, {"sm_70", "sm_8"});
  expect_glob("lib[a-c].so", {"liba.so", "libb.so", "libc.so"}, {"libd.so", "lib.so"});
  expect_glob("lib[!a-c].so", {"libd.so"}, {"liba.so", "libc.so"});
  expect_glob("lib[^a-c].so", {"libz.so"}, {"libb.so"});
  // ']' first in a set is a member; an unclosed '[' is an ordinary character.
  expect_glob("[]x]", {"]", "x"}, {"y"});
  expect_glob("[!]]", {"a"}, {"]"});
  expect_glob("a[b", {"a[b"}, {"ab"});
}

TEST(GlobMatch, BackslashMakesAWildcardLiteral) {
  expect_glob("a\\*b", {"a*b"}, {"axb"});
  expect_glob("what\\?", {"what?"}, {"whatx"});
  expect_glob("[\\]]", {"]"}, {"\\"});
}

TEST(GlobMatch, ALeadingDotMatchesOnlyWhenWritten) {
  expect_glob("*", {"hidden"}, {".hidden"});
  expect_glob("?hidden", {"xhidden"}, {".hidden"});
  expect_glob("[.]hidden", {}, {".hidden"});
  expect_glob(".*", {".hidden", ".libs"}, {"hidden"});
  expect_glob(".hidden", {".hidden"}, {"hidden"});
}

TEST(GlobHasWildcard, PlainNamesAreLookedUpDirectly) {
  EXPECT_FALSE(glob_has_wildcard("libx.so"));
  EXPECT_FALSE(glob_has_wildcard(".libs"));
  for (const char* c : {"*.so", "lib?.a", "[ab]", "**", "a\\b"}) EXPECT_TRUE(glob_has_wildcard(c)) << c;
}

class GlobTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "orc-glob-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    m_dir = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }

  void write(const std::string& rel) {
    fs::create_directories((m_dir / rel).parent_path());
    std::ofstream(m_dir / rel) << rel;
  }

  // glob_files under `root` (default: the whole tree), as generic strings.
  std::vector<std::string> glob(std::string_view pattern, const fs::path& root = {}) {
    std::vector<std::string> out;
    for (const auto& p : glob_files(root.empty() ? m_dir : root, pattern)) out.push_back(p.generic_string());
    return out;
  }

  fs::path m_dir;
};

using Names = std::vector<std::string>;

TEST_F(GlobTree, WildcardsMatchOneComponentAndOnlyFiles) {
  write("build/saxpy");
  write("build/lib/libk.so.1");
  write("build/lib/libk.a");
  write("build/libz.so");
  EXPECT_EQ(glob("build/saxpy"), Names{"build/saxpy"});
  EXPECT_EQ(glob("build/*"), (Names{"build/libz.so", "build/saxpy"}));  // build/lib is a directory
  EXPECT_EQ(glob("*/lib/libk.*"), (Names{"build/lib/libk.a", "build/lib/libk.so.1"}));
  EXPECT_EQ(glob("build/lib/lib?.a"), Names{"build/lib/libk.a"});
  EXPECT_EQ(glob("build/lib/libk.[as]*"), (Names{"build/lib/libk.a", "build/lib/libk.so.1"}));
  EXPECT_EQ(glob("build/lib/libk.[!a]*"), Names{"build/lib/libk.so.1"});
  EXPECT_EQ(glob("*.so"), Names{});  // '*' does not cross a '/'
  EXPECT_EQ(glob("build/lib"), Names{});
  EXPECT_EQ(glob("./build//saxpy"), Names{"build/saxpy"});
  EXPECT_EQ(glob("build/missing/*"), Names{});
  EXPECT_EQ(glob("build/../build/saxpy"), Names{});
  EXPECT_EQ(glob(""), Names{});
}

TEST_F(GlobTree, DoubleStarMatchesZeroOrMoreDirectories) {
  write("libx.so");
  write("build/libx.so");
  write("build/lib/libx.so");
  write("build/lib/stubs/libx.so");
  write("build/lib/libx.so.1");
  write("src/a/b/libx.so");
  EXPECT_EQ(glob("**/libx.so"),
            (Names{"build/lib/libx.so", "build/lib/stubs/libx.so", "build/libx.so", "libx.so", "src/a/b/libx.so"}));
  EXPECT_EQ(glob("build/**/libx.so"), (Names{"build/lib/libx.so", "build/lib/stubs/libx.so", "build/libx.so"}));
  EXPECT_EQ(glob("build/**/stubs/*.so"), Names{"build/lib/stubs/libx.so"});
  EXPECT_EQ(glob("src/**/b/libx.so"), Names{"src/a/b/libx.so"});
  EXPECT_EQ(glob("**/lib/*.so*"), (Names{"build/lib/libx.so", "build/lib/libx.so.1"}));
  // Two stars in one glob find each file once.
  EXPECT_EQ(glob("**/lib/**/libx.so"), (Names{"build/lib/libx.so", "build/lib/stubs/libx.so"}));
  EXPECT_EQ(glob("**/**/stubs/libx.so"), Names{"build/lib/stubs/libx.so"});
}

TEST_F(GlobTree, TrailingDoubleStarIsEveryFileBelow) {
  write("top.txt");
  write("build/a.o");
  write("build/lib/libx.so");
  write("build/lib/stubs/libx.so");
  EXPECT_EQ(glob("build/**"), (Names{"build/a.o", "build/lib/libx.so", "build/lib/stubs/libx.so"}));
  EXPECT_EQ(glob("build/lib/**"), (Names{"build/lib/libx.so", "build/lib/stubs/libx.so"}));
  EXPECT_EQ(glob("**"), (Names{"build/a.o", "build/lib/libx.so", "build/lib/stubs/libx.so", "top.txt"}));
  // "a/**" needs a to be a directory.
  EXPECT_EQ(glob("top.txt/**"), Names{});
}

TEST_F(GlobTree, DotfilesAndDotDirectoriesOnlyWhenWritten) {
  write("build/.libs/libx.so");
  write("build/.hidden.so");
  write("build/shown.so");
  write(".git/objects/x.so");
  EXPECT_EQ(glob("**/*.so"), Names{"build/shown.so"});
  EXPECT_EQ(glob("build/*"), Names{"build/shown.so"});
  EXPECT_EQ(glob("**"), Names{"build/shown.so"});
  EXPECT_EQ(glob("build/.*"), Names{"build/.hidden.so"});
  EXPECT_EQ(glob("build/.libs/*.so"), Names{"build/.libs/libx.so"});
  EXPECT_EQ(glob("**/.libs/*.so"), Names{"build/.libs/libx.so"});
  EXPECT_EQ(glob("build/.*/libx.so"), Names{"build/.libs/libx.so"});
  EXPECT_EQ(glob(".git/**"), Names{".git/objects/x.so"});
}

TEST_F(GlobTree, ASymlinkToAFileCountsAsTheFile) {
  write("build/libx.so.1");
  fs::create_symlink("libx.so.1", m_dir / "build/libx.so");
  fs::create_symlink("missing", m_dir / "build/libdangling.so");
  EXPECT_EQ(glob("build/*.so"), Names{"build/libx.so"});
  EXPECT_EQ(glob("**/libx.so*"), (Names{"build/libx.so", "build/libx.so.1"}));
}

TEST_F(GlobTree, ASymlinkLoopEnds) {
  write("build/lib/libx.so");
  fs::create_directory_symlink("..", m_dir / "build/lib/up");   // back to build
  fs::create_directory_symlink(".", m_dir / "build/lib/self");  // to itself
  fs::create_directory_symlink(m_dir, m_dir / "build/root");    // absolute, to the root
  // Each directory is expanded once, under the first name the sorted walk
  // reaches it by.
  EXPECT_EQ(glob("**/libx.so"), Names{"build/lib/libx.so"});
  EXPECT_EQ(glob("**"), Names{"build/lib/libx.so"});
  // Named through a link that stays inside, a file is found under that name.
  EXPECT_EQ(glob("build/root/build/lib/*.so"), Names{"build/root/build/lib/libx.so"});
}

TEST_F(GlobTree, ASymlinkedDirectoryInsideTheRootIsFollowed) {
  write("out/real/libx.so");
  fs::create_directories(m_dir / "build");
  fs::create_directory_symlink("../out/real", m_dir / "build/lib");
  EXPECT_EQ(glob("**/libx.so", m_dir / "build"), Names{});  // ../out leaves the root build/
  EXPECT_EQ(glob("build/**/libx.so"), Names{"build/lib/libx.so"});
  EXPECT_EQ(glob("build/lib/libx.so"), Names{"build/lib/libx.so"});
}

TEST_F(GlobTree, ASymlinkedDirectoryLeadingOutOfTheRootIsNotFollowed) {
  write("outside/libx.so");
  write("tree/build/libmine.so");
  fs::create_directory_symlink(m_dir / "outside", m_dir / "tree/build/deps");
  fs::create_directory_symlink("/", m_dir / "tree/build/slash");
  const fs::path root = m_dir / "tree";
  EXPECT_EQ(glob("**/*.so", root), Names{"build/libmine.so"});
  EXPECT_EQ(glob("build/deps/libx.so", root), Names{});
  EXPECT_EQ(glob("build/*/libx.so", root), Names{});
  EXPECT_EQ(glob("build/slash/**/libx.so", root), Names{});
  // A root that is itself a symlink is where the tree is.
  fs::create_directory_symlink(root, m_dir / "tree-link");
  EXPECT_EQ(glob("**/*.so", m_dir / "tree-link"), Names{"build/libmine.so"});
}

TEST_F(GlobTree, TheWalkStopsPastTheLimit) {
  for (int i = 0; i < 10; ++i) write("r/" + std::to_string(i) + ".yaml");
  EXPECT_EQ(glob_files(m_dir, "r/*.yaml", {.max_matches = 3}).size(), 4u);
  EXPECT_EQ(glob_files(m_dir, "**/*.yaml", {.max_matches = 20}).size(), 10u);
}

TEST_F(GlobTree, NearMissesShareTheNameAndComeNearestFirst) {
  write("build/build/lib/libx.so");
  write("build/lib/libx.so");
  write("build/other/deep/er/libx.so");
  write("build/lib/liby.so");
  write("build/.libs/libx.so");
  write("src/libx.so");
  const std::vector<fs::path> roots = {m_dir / "build", m_dir / "src"};
  EXPECT_EQ(glob_near_misses(roots, "lib/libx.so", 3), (Names{"lib/libx.so", ".libs/libx.so", "libx.so"}));
  EXPECT_EQ(glob_near_misses(roots, "bin/libx.so", 1), Names{"lib/libx.so"});
  EXPECT_EQ(glob_near_misses(roots, "out/*.so", 10).size(), 6u);
  EXPECT_EQ(glob_near_misses(roots, "lib/libnone.so", 3), Names{});
  EXPECT_EQ(glob_near_misses(roots, "lib/**", 3), Names{});
}

}  // namespace
}  // namespace orc::util
