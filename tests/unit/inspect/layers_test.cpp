// A container image's files from its layers, as the OCI image spec's
// "Representing Changes" applies them: replacement, whiteouts, opaque
// directories, a whiteout leaving its own layer's entry, and hostile names.
#include "orchestrator/inspect/layers.hpp"

#include <gtest/gtest.h>

namespace orc::inspect {
namespace {

using Kind = LayerMerge::Kind;

std::vector<std::string> listing(const LayerMerge& m) {
  std::vector<std::string> out;
  for (const auto& f : m.files())
    out.push_back(f.path + "@" + std::to_string(f.layer) + (f.link.empty() ? "" : "->" + f.link));
  return out;
}

void add(LayerMerge& m, std::string_view name, Kind kind = Kind::file, std::string_view link = {}) {
  auto done = m.entry(name, kind, link);
  ASSERT_TRUE(done) << done.error();
}

TEST(LayerMerge, ALaterLayerReplacesAndAWhiteoutDeletes) {
  LayerMerge m;
  m.begin_layer();
  add(m, "./", Kind::directory);
  add(m, "./usr/lib/libcublas.so.12");
  add(m, "./usr/lib/libcudnn.so.9");
  add(m, "usr/lib/libkeep.so");
  m.begin_layer();
  add(m, "usr/lib/libcublas.so.12");    // replaced
  add(m, "usr/lib/.wh.libcudnn.so.9");  // deleted
  m.finish();
  EXPECT_EQ(listing(m), (std::vector<std::string>{"usr/lib/libcublas.so.12@1", "usr/lib/libkeep.so@0"}));
  EXPECT_TRUE(m.survives("usr/lib/libcublas.so.12", 1));
  EXPECT_FALSE(m.survives("usr/lib/libcublas.so.12", 0));
  EXPECT_FALSE(m.survives("usr/lib/libcudnn.so.9", 0));
  EXPECT_EQ(m.layers(), 2u);
}

TEST(LayerMerge, AWhiteoutOfADirectoryDeletesItsTreeAndAnOpaqueOneHidesTheLowerChildren) {
  LayerMerge m;
  m.begin_layer();
  add(m, "opt/a/x.so");
  add(m, "opt/a/sub/y.so");
  add(m, "opt/b/z.so");
  add(m, "opt/b/w.so");
  m.begin_layer();
  add(m, "opt/.wh.a");
  add(m, "opt/b/.wh..wh..opq");
  add(m, "opt/b/new.so");  // the opaque directory's own layer: it stays
  m.finish();
  EXPECT_EQ(listing(m), (std::vector<std::string>{"opt/b/new.so@1"}));
}

TEST(LayerMerge, AWhiteoutLeavesItsOwnLayersEntry) {
  LayerMerge m;
  m.begin_layer();
  add(m, "lib/x.so");
  m.begin_layer();
  add(m, "lib/x.so");  // written again in the layer that whites it out
  add(m, "lib/.wh.x.so");
  m.begin_layer();  // a third layer that says nothing of it
  add(m, "etc/hosts");
  m.finish();
  EXPECT_EQ(listing(m), (std::vector<std::string>{"etc/hosts@2", "lib/x.so@1"}));
}

TEST(LayerMerge, AFileReplacesADirectoryTreeAndADirectoryAFile) {
  LayerMerge m;
  m.begin_layer();
  add(m, "d/a.so");
  add(m, "d/e/b.so");
  add(m, "p");
  m.begin_layer();
  add(m, "d");       // a file where a directory was: its tree goes
  add(m, "p/q.so");  // a directory where a file was: the file goes
  m.finish();
  EXPECT_EQ(listing(m), (std::vector<std::string>{"d@1", "p/q.so@1"}));
}

TEST(LayerMerge, WithinALayerEntriesApplyInTheOrderTheLayerHoldsThem) {
  // As an unpacker writes them: a file written over a directory of the same
  // layer replaces it, and a file under a file turns it into a directory.
  LayerMerge m;
  m.begin_layer();
  add(m, "a/b.so");
  add(m, "a");
  add(m, "p");
  add(m, "p/q.so");
  m.finish();
  EXPECT_EQ(listing(m), (std::vector<std::string>{"a@0", "p/q.so@0"}));
}

TEST(LayerMerge, AnOpaqueRootHidesEveryLowerEntryAndAnEmptyWhiteoutNothing) {
  LayerMerge m;
  m.begin_layer();
  add(m, "etc/hosts");
  add(m, "usr/lib/x.so");
  m.begin_layer();
  add(m, "usr/.wh.");  // names nothing
  m.begin_layer();
  add(m, ".wh..wh..opq");
  add(m, "usr/lib/y.so");
  m.finish();
  EXPECT_EQ(listing(m), (std::vector<std::string>{"usr/lib/y.so@2"}));
  EXPECT_TRUE(m.is_directory(*m.tree().find("usr/lib")));
  EXPECT_FALSE(m.is_directory(*m.tree().find("etc")));
}

TEST(LayerMerge, HardLinksKeepTheirTargetAndSymlinksAreNotFiles) {
  LayerMerge m;
  m.begin_layer();
  add(m, "usr/lib/libx.so.1");
  add(m, "usr/lib/libx.so", Kind::symlink);
  add(m, "usr/lib/libx-copy.so.1", Kind::hardlink, "./usr/lib/libx.so.1");
  m.finish();
  EXPECT_EQ(listing(m),
            (std::vector<std::string>{"usr/lib/libx-copy.so.1@0->usr/lib/libx.so.1", "usr/lib/libx.so.1@0"}));
}

TEST(LayerMerge, HostileNamesAreRefused) {
  LayerMerge m;
  m.begin_layer();
  auto bad = m.entry("../../etc/passwd", Kind::file);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "entry '../../etc/passwd' has a '..' component");
  bad = m.entry("usr/../../x", Kind::file);
  ASSERT_FALSE(bad);
  bad = m.entry("lib/evil", Kind::hardlink, "../../../etc/shadow");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(),
            "entry 'lib/evil' links to '../../../etc/shadow', which has a '..' component: a link out of "
            "the image");
  // The root entry in every layer is nothing to record; an absolute name is
  // read as the tar tools read it, from the image's root.
  EXPECT_TRUE(m.entry("./", Kind::directory));
  EXPECT_TRUE(m.entry("/usr/bin/x", Kind::file));
  m.finish();
  EXPECT_EQ(listing(m), std::vector<std::string>{"usr/bin/x@0"});
  EXPECT_EQ(LayerMerge::normalize(".//a///b/./c").value(), "a/b/c");
  EXPECT_FALSE(LayerMerge::normalize("./"));
}

}  // namespace
}  // namespace orc::inspect
