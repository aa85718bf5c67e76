// Build scratch trees and their owner locks: a tree whose owner process is
// gone (killed with SIGKILL, or exited without removing it) is swept, one
// whose owner lives is not, and one without an owner lock (kept, or made
// before owner locks) is only listed.
#include "orchestrator/cache/scratch.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "test_support.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;

class Scratch : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_directories(tmp());
  }
  fs::path tmp() const { return m_dir / "store" / "tmp"; }

  // A child process makes a tree with `bytes` of output in it, reports its
  // path through a pipe, and then waits to be killed.
  struct Child {
    pid_t pid = -1;
    fs::path tree;
  };
  Child start_owner(std::size_t bytes) {
    int ends[2];
    EXPECT_EQ(::pipe(ends), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ends[0]);
      auto tree = ScratchTree::create(tmp(), "vision-tier-new");
      if (!tree) ::_exit(1);
      std::ofstream(tree->path() / "build.o", std::ios::binary) << std::string(bytes, 'x');
      const std::string path = tree->path().string() + "\n";
      if (::write(ends[1], path.data(), path.size()) < 0) ::_exit(1);
      ::pause();
      ::_exit(0);
    }
    ::close(ends[1]);
    std::string path;
    char c;
    while (::read(ends[0], &c, 1) == 1 && c != '\n') path += c;
    ::close(ends[0]);
    return {pid, path};
  }
  static void kill_and_reap(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
};

TEST_F(Scratch, TreeOfAKilledBuildIsRemovedWithItsBytesCounted) {
  const Child owner = start_owner(100'000);
  ASSERT_TRUE(fs::is_directory(owner.tree)) << owner.tree;
  EXPECT_TRUE(owner.tree.filename().string().starts_with("build-vision-tier-new-")) << owner.tree;
  kill_and_reap(owner.pid);
  const ScratchSweep swept = sweep_scratch_trees(tmp());
  EXPECT_EQ(swept.removed, 1u);
  EXPECT_EQ(swept.bytes, 100'000u);
  EXPECT_TRUE(swept.in_use.empty());
  EXPECT_TRUE(swept.unowned.empty());
  EXPECT_FALSE(fs::exists(owner.tree));
}

TEST_F(Scratch, TreeOfALiveBuildIsLeftUntilItsOwnerIsGone) {
  const Child owner = start_owner(10);
  const ScratchSweep while_alive = sweep_scratch_trees(tmp());
  EXPECT_EQ(while_alive.removed, 0u);
  EXPECT_EQ(while_alive.in_use, std::vector<fs::path>{owner.tree});
  EXPECT_TRUE(fs::exists(owner.tree / "build.o"));
  kill_and_reap(owner.pid);
  EXPECT_EQ(sweep_scratch_trees(tmp()).removed, 1u);
  EXPECT_FALSE(fs::exists(owner.tree));
}

// flock excludes another open of the file in the same process too: a tree
// this process is building in is in use to a sweep it runs itself.
TEST_F(Scratch, TreeOfThisProcessIsInUseUntilRemoved) {
  auto tree = ScratchTree::create(tmp(), "r-t");
  ASSERT_TRUE(tree) << tree.error().message;
  fs::create_directories(tree->path() / "src" / "deep");
  EXPECT_EQ(sweep_scratch_trees(tmp()).in_use.size(), 1u);
  const fs::path path = tree->path();
  tree->remove();
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_empty(tmp()));
}

TEST_F(Scratch, KeptTreeAndTreeOfAnOlderOrchestrateAreListedNotRemoved) {
  auto tree = ScratchTree::create(tmp(), "kept-t");
  ASSERT_TRUE(tree);
  tree->keep();
  const fs::path legacy = tmp() / ("build-old-tier-" + std::to_string(::getpid() + 1));
  fs::create_directories(legacy / "src");
  const ScratchSweep swept = sweep_scratch_trees(tmp());
  EXPECT_EQ(swept.removed, 0u);
  ASSERT_EQ(swept.unowned.size(), 2u);
  EXPECT_TRUE(fs::exists(tree->path() / "."));
  EXPECT_TRUE(fs::exists(legacy / "src"));
}

// However many trees there are, the report lists a bounded number and counts the rest.
TEST_F(Scratch, ManyTreesAreCountedAndTheFirstListed) {
  for (int i = 0; i < 150; ++i) fs::create_directories(tmp() / ("build-old-t-" + std::to_string(i)));
  const ScratchSweep swept = sweep_scratch_trees(tmp());
  EXPECT_EQ(swept.unowned_total, 150u);
  EXPECT_EQ(swept.unowned.size(), ScratchSweep::k_listed);
}

// A link named like a tree is not followed: what it points at is not the store's.
TEST_F(Scratch, LinkNamedLikeATreeIsNotFollowed) {
  const fs::path elsewhere = m_dir / "elsewhere";
  fs::create_directories(elsewhere);
  write("elsewhere/.owner.lock", "");
  write("elsewhere/precious", "keep me");
  fs::create_directory_symlink(elsewhere, tmp() / "build-evil-tier-abcdef");
  const ScratchSweep swept = sweep_scratch_trees(tmp());
  EXPECT_EQ(swept.removed, 0u);
  EXPECT_EQ(slurp(elsewhere / "precious"), "keep me");
}

TEST_F(Scratch, CreatingInAMissingDirectorySaysWhere) {
  auto tree = ScratchTree::create(m_dir / "no-such-tmp", "r-t");
  ASSERT_FALSE(tree);
  EXPECT_EQ(tree.error().kind, ErrorKind::io);
  EXPECT_NE(tree.error().message.find("creating " + (m_dir / "no-such-tmp").string() + "/build-r-t-"),
            std::string::npos)
      << tree.error().message;
  EXPECT_EQ(tree.error().os_error, ENOENT);
}

}  // namespace
}  // namespace orc::cache
