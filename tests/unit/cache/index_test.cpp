// The SQLite index: queries by tier, recipe and key, newest verified, and
// digest-prefix resolution.
#include "orchestrator/cache/index.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "test_support.hpp"

namespace orc::cache {
namespace {

class IndexTest : public testing::TempDirTest {
 protected:
  Index open() {
    auto index = Index::open(m_dir / "index.v1.sqlite");
    EXPECT_TRUE(index) << index.error().message;
    return std::move(*index);
  }
  static IndexEntry entry(std::string manifest, std::string recipe, std::string tier, std::int64_t created,
                          bool verified = true) {
    return {.manifest = testing::hex_digest(manifest),
            .recipe = std::move(recipe),
            .tier = std::move(tier),
            .key = "key",
            .toolkit = "12.4",
            .cudnn = "9.1.0",
            .sass = {"sm_80", "sm_90"},
            .ptx = {"compute_90"},
            .files = {{.path = "lib/a.so", .sha256 = std::string(64, '1'), .size = 10},
                      {.path = "lib/b.so", .sha256 = std::string(64, '2'), .size = 20}},
            .build_log = testing::hex_digest(std::string(64, '3')),
            .signature = testing::hex_digest(std::string(64, '4')),
            .pack = std::nullopt,
            .source_revision = "rev",
            .signer = "0123456789abcdef",
            .verified = verified,
            .created = created};
  }
};

std::string hex(char first, char rest = '0') { return std::string(1, first) + std::string(63, rest); }

TEST_F(IndexTest, StoresEveryFieldAndQueriesByTierRecipeAndKey) {
  Index index = open();
  const IndexEntry a = entry(hex('a'), "vision", "tier-new", 100);
  ASSERT_TRUE(index.add(a));
  ASSERT_TRUE(index.add(entry(hex('b'), "vision", "tier-old", 200)));
  ASSERT_TRUE(index.add(entry(hex('c'), "caffe", "tier-new", 300)));

  const auto all = index.list();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].manifest.hex(), hex('c'));  // newest first
  const IndexEntry& got = (*all)[2];
  EXPECT_EQ(got.recipe, a.recipe);
  EXPECT_EQ(got.toolkit, "12.4");
  EXPECT_EQ(got.cudnn, "9.1.0");
  EXPECT_EQ(got.sass, a.sass);
  EXPECT_EQ(got.ptx, a.ptx);
  ASSERT_EQ(got.files.size(), 2u);
  EXPECT_EQ(got.files[1].path, "lib/b.so");
  EXPECT_EQ(got.files[1].size, 20u);
  EXPECT_EQ(got.build_log, a.build_log);
  EXPECT_EQ(got.signature, a.signature);
  EXPECT_EQ(got.signer, a.signer);
  EXPECT_EQ(got.source_revision, "rev");
  EXPECT_EQ(got.created, 100);

  EXPECT_EQ(index.list({.tier = "tier-new"})->size(), 2u);
  EXPECT_EQ(index.list({.recipe = "vision"})->size(), 2u);
  EXPECT_EQ(index.list({.recipe = "vision", .tier = "tier-old"})->front().manifest.hex(), hex('b'));
  EXPECT_TRUE(index.list({.recipe = "nope"})->empty());
}

TEST_F(IndexTest, NewestVerifiedSkipsUnverifiedAndOlder) {
  Index index = open();
  ASSERT_TRUE(index.add(entry(hex('a'), "vision", "tier-new", 100)));
  ASSERT_TRUE(index.add(entry(hex('b'), "vision", "tier-new", 200)));
  ASSERT_TRUE(index.add(entry(hex('c'), "vision", "tier-new", 300, /*verified=*/false)));
  EXPECT_EQ(index.newest_verified("vision", "tier-new").value()->manifest.hex(), hex('b'));
  EXPECT_FALSE(index.newest_verified("vision", "tier-old").value().has_value());
}

TEST_F(IndexTest, AddingTheSameManifestReplacesItsRow) {
  Index index = open();
  ASSERT_TRUE(index.add(entry(hex('a'), "vision", "tier-new", 100, false)));
  ASSERT_TRUE(index.add(entry(hex('a'), "vision", "tier-new", 100, true)));
  const auto rows = index.list();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_TRUE(rows->front().verified);
  EXPECT_EQ(rows->front().files.size(), 2u);
}

TEST_F(IndexTest, PrefixResolutionIsUniqueOrAClearError) {
  Index index = open();
  ASSERT_TRUE(index.add(entry("abcd1" + std::string(59, '0'), "vision", "tier-new", 1)));
  ASSERT_TRUE(index.add(entry("abcd2" + std::string(59, '0'), "caffe", "tier-old", 2)));
  EXPECT_EQ(index.resolve(testing::prefix("sha256:abcd1")).value().recipe, "vision");
  EXPECT_EQ(index.resolve(testing::prefix("ABCD2")).value().recipe, "caffe");
  const auto ambiguous = index.resolve(testing::prefix("sha256:abcd"));
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(ambiguous.error().kind, ErrorKind::ambiguous);
  EXPECT_NE(ambiguous.error().message.find("vision, tier-new"), std::string::npos) << ambiguous.error().message;
  EXPECT_NE(ambiguous.error().message.find("caffe, tier-old"), std::string::npos);
  EXPECT_EQ(index.resolve(testing::prefix("ffff")).error().kind, ErrorKind::not_found);
  // Too short to mean one, not hex: refused where the text is parsed, before
  // any query (digest_test's DigestPrefix cases).
  EXPECT_FALSE(digest::DigestPrefix::parse("abc"));
  EXPECT_FALSE(digest::DigestPrefix::parse("abcz1"));
}

// A digest column that is not 64 hex digits (a damaged or hand-edited index)
// is parsed once, where the row is read: an error of kind invalid naming the
// set and the column and how to rebuild, never a set to act on.
TEST_F(IndexTest, AMalformedDigestInARowIsADamagedIndex) {
  {
    Index index = open();
    ASSERT_TRUE(index.add(entry(hex('a'), "vision", "tier-new", 1)));
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((m_dir / "index.v1.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE artifact_sets SET manifest = 'a0a0'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const auto listed = open().list();
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().kind, ErrorKind::invalid);
  EXPECT_EQ(listed.error().message,
            "index: set 1: manifest: digest 'a0a0' has 4 hex digits; sha256 needs 64 (the "
            "index is damaged; " +
                std::string(k_rebuild_hint) + ")");

  ASSERT_EQ(sqlite3_open((m_dir / "index.v1.sqlite").c_str(), &db), SQLITE_OK);
  const std::string sql = "UPDATE artifact_sets SET manifest = '" + hex('a') +
                          "'; UPDATE set_blobs SET digest = 'Z' || substr(digest, 2) WHERE role = 'log'";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const auto resolved = open().resolve(testing::prefix("a000"));
  ASSERT_FALSE(resolved);
  EXPECT_EQ(resolved.error().kind, ErrorKind::invalid);
  EXPECT_TRUE(resolved.error().message.starts_with("index: set 1: log digest: digest 'Z333"))
      << resolved.error().message;
}

TEST_F(IndexTest, RemoveAndReferencedBlobs) {
  Index index = open();
  ASSERT_TRUE(index.add(entry(hex('a'), "vision", "tier-new", 1)));
  auto other = entry(hex('b'), "vision", "tier-new", 2);
  other.files = {{.path = "only", .sha256 = hex('9'), .size = 1}};
  ASSERT_TRUE(index.add(other));
  const auto referenced = index.referenced_blobs().value();
  EXPECT_TRUE(referenced.contains(hex('a')));
  EXPECT_TRUE(referenced.contains(std::string(64, '1')));
  EXPECT_TRUE(referenced.contains(hex('9')));
  EXPECT_EQ(index.remove_referencing(hex('9')).value(), std::vector{testing::hex_digest(hex('b'))});
  EXPECT_FALSE(index.referenced_blobs().value().contains(hex('9')));
  EXPECT_TRUE(index.remove(testing::hex_digest(hex('a'))).value());
  EXPECT_FALSE(index.remove(testing::hex_digest(hex('a'))).value());
  EXPECT_TRUE(index.list()->empty());
  EXPECT_TRUE(index.referenced_blobs()->empty());  // cascade removed the blob rows
}

// What push packed a set's files to: remembered across opens, and made on
// open in an index of schema 2 written before the table existed.
TEST_F(IndexTest, PackedLayersAreRememberedAcrossOpens) {
  {
    Index index = open();
    EXPECT_FALSE(index.packed_layer("k1").value());
    ASSERT_TRUE(index.remember_packed_layer("k1", {.digest = testing::hex_digest(std::string(64, 'd')), .size = 42}));
  }
  EXPECT_EQ(open().packed_layer("k1").value(),
            (PackedLayer{.digest = testing::hex_digest(std::string(64, 'd')), .size = 42}));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((m_dir / "index.v1.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE packed_layers", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  Index older = open();
  EXPECT_FALSE(older.packed_layer("k1").value());
  EXPECT_TRUE(older.remember_packed_layer("k1", {.digest = testing::hex_digest(std::string(64, 'e')), .size = 1}));
}

TEST_F(IndexTest, AnotherSchemaVersionIsRefusedNotRewritten) {
  { Index index = open(); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((m_dir / "index.v1.sqlite").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "UPDATE meta SET value = '7' WHERE key = 'schema_version'", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  const auto refused = Index::open(m_dir / "index.v1.sqlite");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid);
  EXPECT_NE(refused.error().message.find("schema version 7"), std::string::npos);
}

}  // namespace
}  // namespace orc::cache
