// The current set of a recipe x tier (cache/current.hpp): recorded, read
// back, preferred over a newer set by time, and the newest standing in when
// nothing (or a set no longer in the index) is recorded.
#include "orchestrator/cache/current.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace orc::cache {
namespace {

class CurrentSetTest : public testing::TempDirTest {
 protected:
  Store open() {
    auto store = Store::open(m_dir / "store");
    EXPECT_TRUE(store) << store.error().message;
    return std::move(*store);
  }
  static IndexEntry entry(char digit, std::int64_t created, bool verified = true) {
    return {.manifest = testing::hex_digest(std::string(64, digit)),
            .recipe = "saxpy",
            .tier = "tier-new",
            .key = std::string("key-") + digit,
            .toolkit = "13.0",
            .files = {{.path = "saxpy", .sha256 = std::string(64, '1'), .size = 10}},
            .verified = verified,
            .created = created};
  }
};

TEST_F(CurrentSetTest, WithNothingRecordedTheNewestVerifiedStandsIn) {
  Store store = open();
  auto none = current_set(store, "saxpy", "tier-new");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(none->entry);
  ASSERT_TRUE(store.index().add(entry('a', 100)));
  ASSERT_TRUE(store.index().add(entry('b', 200)));
  ASSERT_TRUE(store.index().add(entry('c', 300, false)));  // not verified: never current
  auto got = current_set(store, "saxpy", "tier-new");
  ASSERT_TRUE(got && got->entry);
  EXPECT_EQ(got->entry->manifest, testing::hex_digest(std::string(64, 'b')));
  EXPECT_FALSE(got->recorded);
  EXPECT_FALSE(got->newer);
}

// Edit (set b), revert (the build's hit on the older set a): a is current,
// and b is named as newer.
TEST_F(CurrentSetTest, TheRecordedSetWinsOverANewerOneAndTheNewerIsSaid) {
  Store store = open();
  ASSERT_TRUE(store.index().add(entry('a', 100)));
  ASSERT_TRUE(store.index().add(entry('b', 200)));
  ASSERT_TRUE(write_current(store, "saxpy", "tier-new", testing::hex_digest(std::string(64, 'a'))));
  auto got = current_set(store, "saxpy", "tier-new");
  ASSERT_TRUE(got && got->entry);
  EXPECT_EQ(got->entry->manifest, testing::hex_digest(std::string(64, 'a')));
  EXPECT_TRUE(got->recorded);
  ASSERT_TRUE(got->newer);
  EXPECT_EQ(got->newer->manifest, testing::hex_digest(std::string(64, 'b')));
  auto plain = current_verified(store, "saxpy", "tier-new");
  ASSERT_TRUE(plain && *plain);
  EXPECT_EQ((*plain)->manifest, got->entry->manifest);
  // Another tier has its own record.
  auto other = read_current(store, "saxpy", "tier-old");
  ASSERT_TRUE(other);
  EXPECT_FALSE(*other);
}

TEST_F(CurrentSetTest, ARecordOfASetNoLongerStoredIsSaidAndTheNewestStandsIn) {
  Store store = open();
  ASSERT_TRUE(store.index().add(entry('a', 100)));
  ASSERT_TRUE(write_current(store, "saxpy", "tier-new", testing::hex_digest(std::string(64, 'f'))));
  auto got = current_set(store, "saxpy", "tier-new");
  ASSERT_TRUE(got && got->entry);
  EXPECT_EQ(got->entry->manifest, testing::hex_digest(std::string(64, 'a')));
  EXPECT_FALSE(got->recorded);
  ASSERT_TRUE(got->stale);
  EXPECT_EQ(*got->stale, testing::hex_digest(std::string(64, 'f')));
}

TEST_F(CurrentSetTest, NamesThatAreNotRecipeAndTierNamesAndDamagedRecordsAreInvalid) {
  Store store = open();
  const auto d = testing::hex_digest(std::string(64, 'a'));
  for (const char* bad : {"../x", "", ".hidden", "a/b", "tier new"}) {
    auto written = write_current(store, bad, "tier-new", d);
    ASSERT_FALSE(written) << bad;
    EXPECT_EQ(written.error().kind, ErrorKind::invalid);
  }
  write("store/current/saxpy--tier-new", "not a digest\n");
  auto read = read_current(store, "saxpy", "tier-new");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().kind, ErrorKind::invalid);
  EXPECT_NE(read.error().message.find("saxpy--tier-new"), std::string::npos) << read.error().message;
}

}  // namespace
}  // namespace orc::cache
