// A store whose file system refuses it: errors that say a full or read-only
// file system as such (where, how much is free, what to do), and an index
// opened without writing a byte (IndexAccess::read_only).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/statvfs.h>

#include "orchestrator/cache/store.hpp"
#include "orchestrator/util/strings.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;

class StoreFs : public testing::TempDirTest {
 protected:
  fs::path store_root() const { return m_dir / "store"; }
  fs::path index_file() const { return store_root() / "index.v1.sqlite"; }

  // A store holding one set, closed again (so no -wal or -shm is left).
  IndexEntry make_store() {
    auto store = Store::open(store_root()).value();
    IndexEntry e{.manifest = store.put_bytes("manifest").value().digest, .recipe = "vision", .tier = "tier-new"};
    e.files.push_back({.path = "lib/a.so", .sha256 = store.put_bytes("a").value().digest.hex(), .size = 1});
    e.id = store.record(e).value();
    return e;
  }
};

TEST_F(StoreFs, FullFileSystemSaysWhereHowMuchIsFreeAndWhatToDo) {
  fs::create_directories(store_root());
  const Error worded = explain_store_error(
      store_root(), io_error("writing " + store_root().string() + "/tmp/x: No space left on device", ENOSPC));
  struct statvfs st {};
  ASSERT_EQ(::statvfs(store_root().c_str(), &st), 0);
  const std::string total = util::human_size(static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize);
  EXPECT_EQ(worded.kind, ErrorKind::io);
  EXPECT_TRUE(worded.message.starts_with("the store's file system is full: writing " + store_root().string() +
                                         "/tmp/x: No space left on device; " + store_root().string() + " has "))
      << worded.message;
  EXPECT_NE(worded.message.find(" free of " + total +
                                ": run 'orchestrate cache gc' (it works on a full disk) or "
                                "free space there"),
            std::string::npos)
      << worded.message;
  // Worded once, however many callers pass it on.
  EXPECT_EQ(explain_store_error(store_root(), worded).message, worded.message);
  EXPECT_TRUE(is_full(explain_store_error(store_root(), io_error("quota", EDQUOT))));
}

TEST_F(StoreFs, ReadOnlyFileSystemSaysWhatStillWorks) {
  const Error worded =
      explain_store_error(store_root(), io_error("opening x/locks.v1/store.lock: Read-only file system", EROFS));
  EXPECT_EQ(worded.message,
            "the store is on a read-only file system: opening x/locks.v1/store.lock: Read-only file "
            "system; " +
                store_root().string() +
                " can be read (cache ls, cache verify, fetch of a stored set, inspect of its files); to "
                "write it, remount it read-write, or point ORCHESTRATE_CACHE_DIR at a writable store");
  EXPECT_TRUE(is_read_only(worded));
}

TEST_F(StoreFs, OtherErrorsAreLeftAsTheyAre) {
  const Error other = io_error("reading x: Input/output error", EIO);
  EXPECT_EQ(explain_store_error(store_root(), other).message, other.message);
  EXPECT_EQ(explain_store_error(store_root(), invalid_error("bad")).message, "bad");
}

TEST_F(StoreFs, ReadOnlyIndexReadsTheRowsAndRefusesWrites) {
  const IndexEntry stored = make_store();
  auto index = Index::open(index_file(), IfNoIndex::refuse, IndexAccess::read_only);
  ASSERT_TRUE(index) << index.error().message;
  const auto rows = index->list().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.front().manifest, stored.manifest);
  EXPECT_EQ(rows.front().files, stored.files);
  EXPECT_FALSE(index->remove(stored.manifest));
  EXPECT_EQ(Index::open(index_file(), IfNoIndex::refuse).value().list()->size(), 1u);
}

// Where a read-only connection cannot have its -shm (here a link SQLite
// will not follow; on a read-only mount one that cannot be created), the
// file alone is read, as long as no -wal holds pages it lacks.
TEST_F(StoreFs, ReadOnlyIndexWithoutShmReadsTheFileAloneOnlyWithoutWalPages) {
  const IndexEntry stored = make_store();
  ASSERT_FALSE(fs::exists(index_file().string() + "-wal"));
  fs::create_symlink("/nonexistent", index_file().string() + "-shm");
  auto alone = Index::open(index_file(), IfNoIndex::refuse, IndexAccess::read_only);
  ASSERT_TRUE(alone) << alone.error().message;
  const auto rows = alone->list().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.front().manifest, stored.manifest);
  // The file alone is never written.
  EXPECT_FALSE(alone->remove(stored.manifest));

  // A -wal with pages in it (a writer's, not checkpointed): the file alone
  // would miss them, so the open fails instead.
  write("store/index.v1.sqlite-wal", std::string(4096, 'w'));
  auto refused = Index::open(index_file(), IfNoIndex::refuse, IndexAccess::read_only);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::io) << refused.error().message;
  EXPECT_NE(refused.error().message.find("its -wal holds changes"), std::string::npos) << refused.error().message;
}

TEST_F(StoreFs, ReadOnlyIndexOfSchemaOneSaysItNeedsOneWritableOpen) {
  fs::create_directories(store_root());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(index_file().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                         "INSERT INTO meta VALUES('schema_version', '1')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string before = slurp(index_file());
  auto opened = Index::open(index_file(), IfNoIndex::refuse, IndexAccess::read_only);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().kind, ErrorKind::invalid);
  EXPECT_NE(opened.error().message.find("has schema version 1, which its first write upgrades"), std::string::npos)
      << opened.error().message;
  // Nothing was written: not upgraded.
  EXPECT_EQ(slurp(index_file()), before);
}

}  // namespace
}  // namespace orc::cache
