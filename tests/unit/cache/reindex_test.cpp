// rebuild_index: the index made again from the manifests, signatures and
// packs among the blobs, equal to the one that was lost.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <sstream>

#include "built_sets.hpp"
#include "orchestrator/cache/maintenance.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;

std::vector<IndexEntry> by_manifest(std::vector<IndexEntry> rows) {
  std::ranges::sort(rows, {}, &IndexEntry::manifest);
  return rows;
}

// Every field of the rows but the files' modes, which a set stored without a
// pack has nowhere but in the index.
void expect_same_but_modes(std::vector<IndexEntry> got, std::vector<IndexEntry> want) {
  for (auto* rows : {&got, &want})
    for (auto& e : *rows)
      for (auto& f : e.files) f.mode = 0;
  EXPECT_EQ(by_manifest(got), by_manifest(want));
}

class Reindex : public testing::BuiltSets {
 protected:
  RebuildReport rebuild(const TrustedKeys& trusted) {
    auto report = rebuild_index(root(), trusted, m_progress);
    EXPECT_TRUE(report) << report.error().message;
    return report.value_or(RebuildReport{});
  }

  std::ostringstream m_progress;
};

TEST_F(Reindex, RebuildRecoversTheRowsOfALostIndex) {
  const auto before = build_three();
  fs::remove(index_file());
  const RebuildReport report = rebuild(m_trusted);
  EXPECT_EQ(report.blobs, 15u);
  EXPECT_TRUE(report.skipped.empty());
  EXPECT_TRUE(report.old_index.empty());
  // The signed manifests carry every file's mode: the executables' 0755
  // comes back with the rest of the row.
  EXPECT_EQ(report.unknown_modes, 0u);
  Store store = Store::open(root()).value();
  const auto after = rows(store);
  EXPECT_EQ(by_manifest(after), by_manifest(before));
  // And the store serves them: the newest verified set, its signature good.
  const auto newest = store.index().newest_verified("vision", "tier-new").value();
  ASSERT_TRUE(newest);
  EXPECT_EQ(load_artifact_set(store, *newest, m_trusted)->signature.status, VerifyStatus::verified);
}

TEST_F(Reindex, AfterARebuildGcKeepsEveryBlobASetNames) {
  build_three();
  fs::remove(index_file());
  rebuild(m_trusted);
  Store store = Store::open(root()).value();
  const auto gc = collect_garbage(store, {}, m_progress);
  ASSERT_TRUE(gc) << gc.error().message;
  EXPECT_EQ(gc->removed_blobs, 0u);
  EXPECT_EQ(count_blobs(), 15u);
  const auto verified = verify_store(store, m_progress);
  ASSERT_TRUE(verified);
  EXPECT_TRUE(verified->corrupt.empty());
  EXPECT_TRUE(verified->missing.empty());
}

TEST_F(Reindex, AnOldStoresPackGivesBackTheModesAndTheRowsAreEqual) {
  std::vector<IndexEntry> before;
  {
    Store store = Store::open(root()).value();
    for (const auto& [recipe, tier] : {std::pair{"vision", "tier-new"}, {"caffe", "tier-old"}}) {
      const IndexEntry e = build(store, recipe, tier);
      add_old_pack(store, e, sources_of(recipe, tier));
    }
    before = rows(store);
  }
  ASSERT_EQ(before.front().files[0].mode, 0755u);
  scramble_index();
  const RebuildReport report = rebuild(m_trusted);
  EXPECT_EQ(report.unknown_modes, 0u);
  EXPECT_FALSE(report.old_index.empty());
  EXPECT_EQ(by_manifest(rows(Store::open(root()).value())), by_manifest(before));
}

TEST_F(Reindex, TheIndexItReplacesIsKeptInQuarantine) {
  build_three();
  testing::set_schema_version(index_file(), "3");
  const RebuildReport report = rebuild(m_trusted);
  EXPECT_EQ(report.old_index.parent_path(), root() / "quarantine.v1");
  ASSERT_TRUE(fs::exists(report.old_index));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(report.old_index.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &s, nullptr);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "3");
  sqlite3_finalize(s);
  sqlite3_close(db);
  EXPECT_EQ(rows(Store::open(root()).value()).size(), 3u);
  // Nothing of the rebuild is left in tmp/.
  EXPECT_TRUE(fs::is_empty(root() / "tmp"));
}

TEST_F(Reindex, ASetWhoseFilesAreGoneIsLeftOutAndSaidSo) {
  const auto before = build_three();
  const auto& lost = before.front();
  fs::remove(Store::open(root()).value().blob_path(lost.files[1].sha256));
  fs::remove(index_file());
  const RebuildReport report = rebuild(m_trusted);
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_NE(report.skipped[0].find(lost.manifest.to_string()), std::string::npos) << report.skipped[0];
  EXPECT_NE(report.skipped[0].find(lost.files[1].sha256 + " is not stored"), std::string::npos) << report.skipped[0];
  EXPECT_EQ(report.sets.size(), 2u);
}

TEST_F(Reindex, WithoutTheSignersKeyRowsKeepTheirSignatureButAreNotVerified) {
  const auto before = build_three();
  fs::remove(index_file());
  const RebuildReport report = rebuild({});
  ASSERT_EQ(report.sets.size(), 3u);
  for (const auto& e : report.sets) {
    EXPECT_FALSE(e.verified);
    EXPECT_TRUE(e.signature);
    EXPECT_EQ(e.signer, m_key->public_key().key_id());
  }
  EXPECT_FALSE(Store::open(root()).value().index().newest_verified("vision", "tier-new").value());
}

// A process that opened the store before the rebuild must not write its row
// into the index that was moved to quarantine.
TEST_F(Reindex, AStoreOpenedBeforeARebuildRecordsIntoTheNewIndex) {
  build_three();
  Store early = Store::open(root()).value();
  rebuild(m_trusted);
  const IndexEntry added = build(early, "late", "tier-new");
  const auto now = rows(Store::open(root()).value());
  EXPECT_EQ(now.size(), 4u);
  EXPECT_TRUE(std::ranges::any_of(now, [&](const IndexEntry& e) { return e.manifest == added.manifest; }));
}

}  // namespace
}  // namespace orc::cache
