// Names as a tree of components: each stored once, paths built back, and
// the caps checked before anything is added.
#include "orchestrator/inspect/path_tree.hpp"

#include <gtest/gtest.h>

namespace orc::inspect {
namespace {

TEST(PathTree, ComponentsAreSharedAndPathsBuiltBack) {
  PathTree tree;
  const auto lib = tree.intern("usr/lib/libx.so");
  const auto other = tree.intern("usr/lib/liby.so");
  EXPECT_EQ(tree.size(), 5u);  // the root, usr, lib and the two files
  EXPECT_EQ(tree.name_bytes(), 3u + 3u + 7u + 7u);
  EXPECT_EQ(tree.path(lib), "usr/lib/libx.so");
  EXPECT_EQ(tree.parent(lib), tree.parent(other));
  EXPECT_LT(tree.parent(lib), lib);
  EXPECT_EQ(tree.find("usr/lib"), tree.parent(lib));
  EXPECT_EQ(tree.child(tree.parent(lib), "liby.so"), other);
  EXPECT_FALSE(tree.find("usr/lib/libz.so"));
  EXPECT_EQ(tree.intern("usr/lib/libx.so"), lib);
  EXPECT_EQ(tree.path(PathTree::k_root), "");
}

TEST(PathTree, APathPastACapAddsNothing) {
  PathTree tree;
  tree.intern("a/b");
  auto full = tree.intern("a/c/d/e", 5, 1000);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error(), PathTree::Full::nodes);
  full = tree.intern("a/" + std::string(100, 'x'), 100, 50);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error(), PathTree::Full::bytes);
  EXPECT_EQ(tree.size(), 3u);
  EXPECT_FALSE(tree.find("a/c"));
  EXPECT_TRUE(tree.intern("a/c", 4, 1000));
}

TEST(PathTree, ManyNamesAndLongOnesStayFindable) {
  PathTree tree;
  const std::string long_name(100000, 'n');
  const auto deep = tree.intern("top/" + long_name + "/leaf");
  for (int i = 0; i < 10000; ++i) tree.intern("top/f" + std::to_string(i));
  EXPECT_EQ(tree.path(deep), "top/" + long_name + "/leaf");
  for (int i = 0; i < 10000; i += 997) EXPECT_TRUE(tree.find("top/f" + std::to_string(i))) << i;
}

}  // namespace
}  // namespace orc::inspect
