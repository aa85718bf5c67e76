// A store whose index is missing, damaged or of a newer version (issue 11):
// never opened with a new, empty index, never collected, and an error of
// kind invalid (a local state: exit 2) that says how to rebuild it.
#include <gtest/gtest.h>

#include <sstream>

#include "built_sets.hpp"
#include "orchestrator/cache/maintenance.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;

class DamagedIndex : public testing::BuiltSets {
 protected:
  // Store::open refuses, says so and how to rebuild, and no blob is gone.
  void expect_refused(const std::string& why) {
    const std::size_t blobs = count_blobs();
    const auto opened = Store::open(root());
    ASSERT_FALSE(opened) << "a damaged index was opened";
    EXPECT_EQ(opened.error().kind, ErrorKind::invalid);
    EXPECT_NE(opened.error().message.find(why), std::string::npos) << opened.error().message;
    EXPECT_NE(opened.error().message.find("orchestrate cache verify --rebuild-index"), std::string::npos)
        << opened.error().message;
    EXPECT_EQ(count_blobs(), blobs);
  }

  std::ostringstream m_progress;
};

TEST_F(DamagedIndex, AMissingIndexIsRefusedNotMadeAgainEmpty) {
  build_three();
  ASSERT_EQ(count_blobs(), 15u);  // 3 x (2 files, log, manifest, signature)
  fs::remove(index_file());
  expect_refused("is missing");
  EXPECT_FALSE(fs::exists(index_file())) << "opening the store made an empty index";
}

TEST_F(DamagedIndex, RandomBytesInPlaceOfTheIndexAreRefused) {
  build_three();
  scramble_index();
  expect_refused("damaged or not a database");
}

TEST_F(DamagedIndex, AnIndexOfANewerSchemaVersionIsRefused) {
  build_three();
  testing::set_schema_version(index_file(), "3");
  expect_refused("has schema version 3");
}

TEST_F(DamagedIndex, AnEmptyFileOrADirectoryInPlaceOfTheIndexIsRefused) {
  build_three();
  std::ofstream(index_file(), std::ios::trunc).close();
  expect_refused("holds no index");
  fs::remove(index_file());
  fs::create_directory(index_file());
  expect_refused("is not a regular file");
}

TEST_F(DamagedIndex, RandomBytesAfterTheHeaderAreRefused) {
  build_three();
  scramble_index(100);
  expect_refused("database disk image is malformed");
}

// Damage SQLite only finds when it reads the page: the last one, where rows
// live, is random. The store opens; gc checks every page first and refuses.
TEST_F(DamagedIndex, ADamagedPageStopsGcBeforeItDeletesAnything) {
  build_three();
  scramble_index(fs::file_size(index_file()) - 4096);
  const std::size_t blobs = count_blobs();
  auto opened = Store::open(root());
  ASSERT_TRUE(opened) << opened.error().message;
  const auto gc = collect_garbage(*opened, {}, m_progress);
  ASSERT_FALSE(gc) << "gc ran on a damaged index and removed " << gc->removed_blobs << " blobs";
  EXPECT_EQ(gc.error().kind, ErrorKind::invalid);
  EXPECT_NE(gc.error().message.find("index: damaged: "), std::string::npos) << gc.error().message;
  EXPECT_NE(gc.error().message.find("--rebuild-index"), std::string::npos) << gc.error().message;
  EXPECT_EQ(count_blobs(), blobs);
}

TEST_F(DamagedIndex, AStoreWithoutBlobsStillGetsANewIndex) {
  { Store store = Store::open(root()).value(); }
  fs::remove(index_file());
  EXPECT_TRUE(Store::open(root()));
  EXPECT_TRUE(fs::exists(index_file()));
}

TEST_F(DamagedIndex, GcOnASoundIndexStillCollects) {
  Store store = Store::open(root()).value();
  build(store, "vision", "tier-new");
  ASSERT_TRUE(store.put_bytes("nobody names this"));
  const auto gc = collect_garbage(store, {}, m_progress);
  ASSERT_TRUE(gc) << gc.error().message;
  EXPECT_EQ(gc->removed_blobs, 1u);
}

}  // namespace
}  // namespace orc::cache
