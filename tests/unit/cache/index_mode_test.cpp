// File modes in the index (set_blobs.mode, schema version 2), and the
// upgrade of a schema-1 index, which had none, on open.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "orchestrator/cache/index.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

// The schema of version 1, as an older orchestrate wrote it: set_blobs has
// no mode column.
constexpr const char* k_schema_v1 = R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS artifact_sets(
  id INTEGER PRIMARY KEY,
  manifest TEXT NOT NULL UNIQUE,
  recipe TEXT NOT NULL, tier TEXT NOT NULL, key TEXT NOT NULL,
  toolkit TEXT NOT NULL, cudnn TEXT NOT NULL, sass TEXT NOT NULL, ptx TEXT NOT NULL,
  source_revision TEXT NOT NULL, signer TEXT NOT NULL,
  verified INTEGER NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS set_blobs(
  set_id INTEGER NOT NULL REFERENCES artifact_sets(id) ON DELETE CASCADE,
  role TEXT NOT NULL, path TEXT NOT NULL, digest TEXT NOT NULL, size INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS sets_by_recipe_tier ON artifact_sets(recipe, tier, created);
CREATE INDEX IF NOT EXISTS sets_by_key ON artifact_sets(key);
CREATE INDEX IF NOT EXISTS blobs_by_set ON set_blobs(set_id);
CREATE INDEX IF NOT EXISTS blobs_by_digest ON set_blobs(digest);
INSERT INTO meta(key, value) VALUES('schema_version', '1');
INSERT INTO artifact_sets(id, manifest, recipe, tier, key, toolkit, cudnn, sass, ptx, source_revision, signer,
                          verified, created)
  VALUES(1, 'aaaa000000000000000000000000000000000000000000000000000000000000', 'vision', 'tier-new', 'k',
         '12.4', '', 'sm_80 sm_90', 'compute_90', 'rev', '', 1, 100);
INSERT INTO set_blobs(set_id, role, path, digest, size)
  VALUES(1, 'manifest', '', 'aaaa000000000000000000000000000000000000000000000000000000000000', 0);
INSERT INTO set_blobs(set_id, role, path, digest, size)
  VALUES(1, 'file', 'bin/tool', '1111111111111111111111111111111111111111111111111111111111111111', 42);
INSERT INTO set_blobs(set_id, role, path, digest, size)
  VALUES(1, 'file', 'lib/a.so', '2222222222222222222222222222222222222222222222222222222222222222', 7);
)";

class IndexMode : public testing::TempDirTest {
 protected:
  std::filesystem::path file() const { return m_dir / "index.v1.sqlite"; }

  void write_v1_index() {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file().c_str(), &db), SQLITE_OK);
    char* message = nullptr;
    const int rc = sqlite3_exec(db, k_schema_v1, nullptr, nullptr, &message);
    const std::string why = message ? message : "";
    sqlite3_free(message);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << why;
  }

  // One value read straight from the database, bypassing Index.
  std::string query(const std::string& sql) const {
    sqlite3* db = nullptr;
    std::string out = "<none>";
    if (sqlite3_open_v2(file().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* s = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
        const auto* text = sqlite3_column_text(s, 0);
        out = text ? reinterpret_cast<const char*>(text) : "<null>";
      }
      sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return out;
  }

  static IndexEntry entry(std::string manifest, std::vector<IndexedFile> files) {
    return {.manifest = testing::hex_digest(manifest),
            .recipe = "vision",
            .tier = "tier-new",
            .key = "key",
            .toolkit = "12.4",
            .files = std::move(files),
            .source_revision = "rev",
            .verified = true,
            .created = 200};
  }
};

std::string hex(char first, char rest = '0') { return std::string(1, first) + std::string(63, rest); }

TEST_F(IndexMode, ANewIndexRecordsSchemaVersionTwo) {
  { ASSERT_TRUE(Index::open(file())); }
  EXPECT_EQ(Index::k_schema_version, 2);
  EXPECT_EQ(query("SELECT value FROM meta WHERE key = 'schema_version'"), "2");
}

TEST_F(IndexMode, FileModesAreStoredAndReadBack) {
  auto index = Index::open(file());
  ASSERT_TRUE(index) << index.error().message;
  ASSERT_TRUE(index->add(entry(hex('a'), {{.path = "bin/tool", .sha256 = hex('1'), .size = 5, .mode = 0755},
                                          {.path = "lib/a.so", .sha256 = hex('2'), .size = 6, .mode = 0644},
                                          {.path = "lib/key", .sha256 = hex('3'), .size = 7, .mode = 0600},
                                          {.path = "lib/default.so", .sha256 = hex('4'), .size = 8}})));
  const auto rows = index->list();
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  const auto& files = rows->front().files;
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].path, "bin/tool");
  EXPECT_EQ(files[0].mode, 0755u);
  EXPECT_EQ(files[1].mode, 0644u);
  EXPECT_EQ(files[2].mode, 0600u);
  EXPECT_EQ(files[3].mode, 0644u);  // IndexedFile's default
  EXPECT_EQ(query("SELECT mode FROM set_blobs WHERE path = 'bin/tool'"), std::to_string(0755));

  // The same through resolve(), and after the database is opened again.
  EXPECT_EQ(index->resolve(testing::prefix(hex('a').substr(0, 8))).value().files[0].mode, 0755u);
  auto again = Index::open(file());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->list().value().front().files[0].mode, 0755u);
}

TEST_F(IndexMode, OnlyPermissionBitsAreKept) {
  auto index = Index::open(file());
  ASSERT_TRUE(index) << index.error().message;
  ASSERT_TRUE(index->add(entry(hex('a'), {{.path = "bin/su", .sha256 = hex('1'), .size = 5, .mode = 04755}})));
  EXPECT_EQ(index->list().value().front().files[0].mode, 0755u);
}

TEST_F(IndexMode, ASchemaOneIndexIsUpgradedOnOpenAndReadsAs0644) {
  write_v1_index();
  ASSERT_EQ(query("SELECT value FROM meta WHERE key = 'schema_version'"), "1");
  {
    auto index = Index::open(file());
    ASSERT_TRUE(index) << index.error().message;
    const auto rows = index->list();
    ASSERT_TRUE(rows) << rows.error().message;
    ASSERT_EQ(rows->size(), 1u);
    const IndexEntry& got = rows->front();
    EXPECT_EQ(got.manifest.hex(), "aaaa" + std::string(60, '0'));
    EXPECT_EQ(got.recipe, "vision");
    EXPECT_EQ(got.sass.names(), (std::vector<std::string>{"sm_80", "sm_90"}));
    EXPECT_EQ(got.created, 100);
    ASSERT_EQ(got.files.size(), 2u);
    EXPECT_EQ(got.files[0].path, "bin/tool");
    EXPECT_EQ(got.files[0].sha256, std::string(64, '1'));
    EXPECT_EQ(got.files[0].size, 42u);
    EXPECT_EQ(got.files[0].mode, 0644u);
    EXPECT_EQ(got.files[1].path, "lib/a.so");
    EXPECT_EQ(got.files[1].mode, 0644u);

    // The upgraded index takes modes like a new one.
    ASSERT_TRUE(index->add(entry(hex('b'), {{.path = "bin/new", .sha256 = hex('5'), .size = 3, .mode = 0755}})));
    const auto added = index->resolve(testing::prefix(hex('b')));
    ASSERT_TRUE(added) << added.error().message;
    ASSERT_EQ(added->files.size(), 1u);
    EXPECT_EQ(added->files[0].mode, 0755u);
  }
  EXPECT_EQ(query("SELECT value FROM meta WHERE key = 'schema_version'"), "2");
  EXPECT_EQ(query("SELECT count(*) FROM pragma_table_info('set_blobs') WHERE name = 'mode'"), "1");
  // Opening the upgraded index again is no second upgrade, and loses nothing.
  auto again = Index::open(file());
  ASSERT_TRUE(again) << again.error().message;
  const auto rows = again->list();
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(rows->front().files.at(0).mode, 0755u);  // hex('b'), created later
  EXPECT_EQ(rows->back().files.at(0).mode, 0644u);
  EXPECT_EQ(again->referenced_blobs().value().count(std::string(64, '2')), 1u);
}

}  // namespace
}  // namespace orc::cache
