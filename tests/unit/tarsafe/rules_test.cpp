// Every row of the table in orchestrator/tarsafe/rules.hpp, hostile entries
// included: the entries before (each must be accepted) and the entry judged,
// with the reason it is refused for or what it is accepted as.
#include "orchestrator/tarsafe/rules.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

namespace orc::tarsafe {
namespace {

struct In {
  std::string name;
  Kind kind = Kind::file;
  std::string link;
  unsigned mode = 0644;
  std::uint64_t size = 0;
  Entry entry() const { return {.name = name, .kind = kind, .link = link, .mode = mode, .size = size}; }
};

In dir(std::string name, unsigned mode = 0755) {
  return {.name = std::move(name), .kind = Kind::directory, .mode = mode};
}
In sym(std::string name, std::string target) {
  return {.name = std::move(name), .kind = Kind::symlink, .link = std::move(target), .mode = 0777};
}
In hard(std::string name, std::string target) {
  return {.name = std::move(name), .kind = Kind::hardlink, .link = std::move(target)};
}
In of(std::string name, Kind kind) { return {.name = std::move(name), .kind = kind}; }

struct Row {
  std::string label;
  std::vector<In> before;
  In entry;
  std::string refused;  // the reason; empty: accepted
  std::optional<Accepted> as = std::nullopt;
};

std::string component(std::size_t n) { return std::string(n, 'c'); }
// A name of `n` bytes made of 200-byte components.
std::string long_name(std::size_t n) {
  std::string out;
  while (out.size() + 201 <= n) out += component(200) + "/";
  return out + component(n - out.size());
}

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      // Names.
      {"empty name", {}, {.name = ""}, "has an empty name"},
      {"root '.'", {}, dir("."), "", Accepted{.path = "", .link = "", .perm = 0755}},
      {"root './'", {dir("./")}, dir("./"), "", Accepted{.path = "", .link = "", .perm = 0755}},
      {"root as a file", {}, {.name = "."}, "names the destination itself"},
      {"root as a symlink", {}, sym("./", "x"), "names the destination itself"},
      {"absolute", {}, {.name = "/etc/cron.d/evil"}, "has an absolute path"},
      {"dot-dot", {}, {.name = "out/../../evil"}, "has a '..' component"},
      {"dot-dot staying inside", {}, {.name = "a/../b"}, "has a '..' component"},
      {"normalized", {}, {.name = "./out//k/", .mode = 0640}, "", Accepted{.path = "out/k", .link = "", .perm = 0640}},
      {"component of 255 bytes",
       {},
       {.name = component(255)},
       "",
       Accepted{.path = component(255), .link = "", .perm = 0644}},
      {"component over 255 bytes", {}, {.name = "d/" + component(256)}, "has a name component over 255 bytes"},
      {"name of 4095 bytes",
       {},
       {.name = long_name(4095)},
       "",
       Accepted{.path = long_name(4095), .link = "", .perm = 0644}},
      {"name over 4095 bytes", {}, {.name = long_name(4096)}, "has a name over 4095 bytes"},
      // Types.
      {"character device", {}, of("null", Kind::char_device), "is a device file"},
      {"block device", {}, of("disk", Kind::block_device), "is a device file"},
      {"fifo", {}, of("pipe", Kind::fifo), "is a FIFO or socket"},
      {"socket", {}, of("sock", Kind::socket), "is a FIFO or socket"},
      {"unknown type", {}, of("what", Kind::unknown), "has an unknown file type"},
      // Where an entry lies.
      {"below an earlier symlink", {sym("l", "d"), dir("d")}, {.name = "l/f"}, "lies below the archive's symlink 'l'"},
      {"deep below an earlier symlink", {sym("a/l", "x")}, dir("a/l/b/c"), "lies below the archive's symlink 'a/l'"},
      {"below a later symlink", {{.name = "l/f"}}, sym("l", "d"), "repeats an earlier entry's path"},
      {"below an earlier file", {{.name = "f"}}, {.name = "f/g"}, "lies below 'f', which is not a directory"},
      {"below an earlier hard link",
       {{.name = "f"}, hard("h", "f")},
       dir("h/x"),
       "lies below 'h', which is not a directory"},
      {"repeated file", {{.name = "f"}}, {.name = "./f"}, "repeats an earlier entry's path"},
      {"file over a symlink", {{.name = "f"}}, sym("f", "elsewhere"), "repeats an earlier entry's path"},
      {"repeated directory", {dir("d")}, dir("d/"), "", Accepted{.path = "d", .link = "", .perm = 0755}},
      {"directory made for a file, then given",
       {{.name = "a/x"}},
       dir("a", 0750),
       "",
       Accepted{.path = "a", .link = "", .perm = 0750}},
      {"file where a directory was made", {{.name = "a/x"}}, {.name = "a"}, "repeats an earlier entry's path"},
      // Hard links.
      {"hard link absolute", {}, hard("h", "/etc/shadow"), "is a hard link whose target has an absolute path"},
      {"hard link dot-dot", {}, hard("h", "../outside"), "is a hard link whose target has a '..' component"},
      {"hard link to a later file", {}, hard("h", "later"), "is a hard link to 'later', not an earlier regular file"},
      {"hard link to a directory", {dir("d")}, hard("h", "d"), "is a hard link to 'd', not an earlier regular file"},
      {"hard link to a made directory",
       {{.name = "d/f"}},
       hard("h", "d"),
       "is a hard link to 'd', not an earlier regular file"},
      {"hard link to a symlink",
       {sym("l", "f"), {.name = "f"}},
       hard("h", "l"),
       "is a hard link to 'l', not an earlier regular file"},
      {"hard link to the root", {}, hard("h", "."), "is a hard link to '', not an earlier regular file"},
      {"hard link to a file",
       {{.name = "out/k"}},
       hard("out/h", "./out/k"),
       "",
       Accepted{.path = "out/h", .link = "out/k", .perm = 0644}},
      {"hard link to a hard link",
       {{.name = "f"}, hard("g", "f")},
       hard("h", "g"),
       "",
       Accepted{.path = "h", .link = "g", .perm = 0644}},
      // Symlinks.
      {"symlink, empty target", {}, sym("l", ""), "is a symlink with an empty target"},
      {"symlink, absolute", {}, sym("out/etc", "/etc"), "is a symlink to an absolute path ('/etc')"},
      {"symlink, more '..' than its depth",
       {},
       sym("out/up", "../../.."),
       "is a symlink ('../../..') that resolves outside the destination"},
      {"symlink at the top, '..'", {}, sym("x", ".."), "is a symlink ('..') that resolves outside the destination"},
      {"symlink, '..' up to the root", {}, sym("d/p", ".."), "", Accepted{.path = "d/p", .link = "..", .perm = 0777}},
      {"symlink, leading '..' then names",
       {},
       sym("out/up", "../out/k"),
       "",
       Accepted{.path = "out/up", .link = "../out/k", .perm = 0777}},
      {"symlink, '.' and names", {}, sym("q", "./a/./b"), "", Accepted{.path = "q", .link = "./a/./b", .perm = 0777}},
      {"symlink, '..' after a name through a link",
       {sym("d/p", "..")},
       sym("q", "d/p/.."),
       "is a symlink ('d/p/..') with a '..' after a name (only leading '..' are accepted: the name may be a link)"},
      {"symlink, '..' after a directory's name",
       {dir("d/p")},
       sym("q", "d/p/.."),
       "is a symlink ('d/p/..') with a '..' after a name (only leading '..' are accepted: the name may be a link)"},
      {"symlink chain that leaves",
       {sym("s", ".")},
       sym("x", "s/.."),
       "is a symlink ('s/..') with a '..' after a name (only leading '..' are accepted: the name may be a link)"},
      {"symlink target of 4096 bytes", {}, sym("l", long_name(4096)), "is a symlink whose target is over 4095 bytes"},
      // Modes.
      {"setuid file", {}, {.name = "f", .mode = 04755}, "", Accepted{.path = "f", .link = "", .perm = 0755}},
      {"setgid and sticky", {}, {.name = "f", .mode = 03777}, "", Accepted{.path = "f", .link = "", .perm = 0777}},
      {"directory writable by all", {}, dir("d", 01777), "", Accepted{.path = "d", .link = "", .perm = 0755}},
      {"read-only directory", {}, dir("d", 0500), "", Accepted{.path = "d", .link = "", .perm = 0700}},
  };
  return table;
}

TEST(TarsafeRules, EveryRowOfTheTable) {
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.label);
    Rules rules;
    for (const In& in : row.before) ASSERT_TRUE(rules.check(in.entry())) << "refused before: " << in.name;
    const auto got = rules.check(row.entry.entry());
    if (!row.refused.empty()) {
      ASSERT_FALSE(got) << "accepted as '" << got->path << "'";
      EXPECT_EQ(got.error().entry, row.entry.name);
      EXPECT_EQ(got.error().reason, row.refused);
      continue;
    }
    ASSERT_TRUE(got) << got.error().reason;
    ASSERT_TRUE(row.as);
    EXPECT_EQ(got->path, row.as->path);
    EXPECT_EQ(got->link, row.as->link);
    EXPECT_EQ(got->perm, row.as->perm) << std::oct << got->perm;
    EXPECT_TRUE(rules.finish());
  }
}

// Declared sizes against the caller's limit; only files count.
TEST(TarsafeRules, DeclaredSizesPastTheLimitAreRefused) {
  Rules rules(Limits{.max_bytes = 10});
  EXPECT_TRUE(rules.check({.name = "a", .size = 6}));
  EXPECT_TRUE(rules.check({.name = "d", .kind = Kind::directory, .size = 4096}));
  EXPECT_TRUE(rules.check({.name = "h", .kind = Kind::hardlink, .link = "a", .size = 6}));
  EXPECT_TRUE(rules.check({.name = "b", .size = 4}));
  const auto over = rules.check({.name = "c", .size = 1});
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().reason, "takes the files past the 10 bytes expected");
  // A size that would wrap the total around.
  Rules huge(Limits{.max_bytes = 10});
  EXPECT_TRUE(huge.check({.name = "a", .size = 5}));
  EXPECT_FALSE(huge.check({.name = "b", .size = ~std::uint64_t{0}}));
  Rules unlimited;
  EXPECT_TRUE(unlimited.check({.name = "a", .size = ~std::uint64_t{0}}));
}

// What only the whole archive answers: every entry alone is fine.
TEST(TarsafeRules, LoopsAreRefusedOnceEveryEntryIsIn) {
  struct Loop {
    std::string label;
    std::vector<In> entries;
    std::string entry, reason;  // empty: accepted
  };
  std::vector<In> chain_40, chain_41;
  for (int i = 0; i <= 41; ++i) {
    const In link = sym("l" + std::to_string(i), "l" + std::to_string(i + 1));
    if (i < 41) chain_40.push_back(link);
    chain_41.push_back(link);
  }
  const std::vector<Loop> loops = {
      {"two links", {sym("a", "b"), sym("b", "a")}, "a", "is a symlink ('b') in a loop"},
      {"itself", {sym("a", "a")}, "a", "is a symlink ('a') in a loop"},
      {"through its own name", {sym("l", "l/x")}, "l", "is a symlink ('l/x') in a loop"},
      {"the second one closes it",
       {{.name = "f"}, sym("d/x", "../y"), sym("y", "d/x")},
       "d/x",
       "is a symlink ('../y') in a loop"},
      {"a chain followed through 40 links", chain_40, "", ""},
      {"a chain followed through 41 links", chain_41, "l0", "is a symlink ('l1') in a loop"},
      {"links to links", {sym("s", "."), sym("t", "s"), sym("u", "t/t/t")}, "", ""},
  };
  for (const Loop& loop : loops) {
    SCOPED_TRACE(loop.label);
    Rules rules;
    for (const In& in : loop.entries) ASSERT_TRUE(rules.check(in.entry())) << in.name;
    const auto whole = rules.finish();
    if (loop.reason.empty()) {
      EXPECT_TRUE(whole) << whole.error().reason;
      continue;
    }
    ASSERT_FALSE(whole);
    EXPECT_EQ(whole.error().entry, loop.entry);
    EXPECT_EQ(whole.error().reason, loop.reason);
  }
}

TEST(TarsafeKind, FromTheTypeBits) {
  EXPECT_EQ(kind_of(S_IFREG, false), Kind::file);
  EXPECT_EQ(kind_of(S_IFDIR, false), Kind::directory);
  EXPECT_EQ(kind_of(S_IFLNK, false), Kind::symlink);
  EXPECT_EQ(kind_of(S_IFCHR, false), Kind::char_device);
  EXPECT_EQ(kind_of(S_IFBLK, false), Kind::block_device);
  EXPECT_EQ(kind_of(S_IFIFO, false), Kind::fifo);
  EXPECT_EQ(kind_of(S_IFSOCK, false), Kind::socket);
  EXPECT_EQ(kind_of(0, false), Kind::unknown);
  // A hard-link target decides, whatever the type bits say.
  EXPECT_EQ(kind_of(S_IFREG, true), Kind::hardlink);
  EXPECT_EQ(kind_of(0, true), Kind::hardlink);
}

// Moved from tests/unit/engine/archive_test.cpp with the function
// (engine::normalize_entry_path); an empty name is refused now.
TEST(NormalizeEntryPath, Forms) {
  EXPECT_EQ(normalize("./out//k"), "out/k");
  EXPECT_EQ(normalize("out/"), "out");
  EXPECT_EQ(normalize("."), "");
  EXPECT_FALSE(normalize("/abs"));
  EXPECT_FALSE(normalize("a/.."));
  EXPECT_EQ(normalize(""), std::unexpected(std::string("has an empty name")));
}

}  // namespace
}  // namespace orc::tarsafe
