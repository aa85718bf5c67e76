// cache verify (re-hash, quarantine, drop rows) and cache gc (keep N,
// unreferenced blobs, crash-left temporaries).
#include "orchestrator/cache/maintenance.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "test_support.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;

class Maintenance : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    m_store = std::make_unique<Store>(Store::open(m_dir / "store").value());
  }
  // A set of one shared file, one file of its own, a log and a manifest.
  IndexEntry add_set(const std::string& recipe, const std::string& tier, std::int64_t created) {
    Store& s = *m_store;
    const std::string tag = recipe + tier + std::to_string(created);
    IndexEntry e{
        .manifest = s.put_bytes("manifest " + tag).value().digest, .recipe = recipe, .tier = tier, .created = created};
    e.files.push_back({.path = "shared", .sha256 = s.put_bytes("shared file").value().digest.hex(), .size = 11});
    e.files.push_back({.path = "own", .sha256 = s.put_bytes("own " + tag).value().digest.hex(), .size = 4});
    e.build_log = s.put_bytes("log " + tag).value().digest;
    e.verified = true;
    EXPECT_TRUE(s.record(e));
    return e;
  }
  void overwrite(const std::string& hex, const std::string& text) {
    const auto path = m_store->blob_path(hex);
    fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
    std::ofstream(path, std::ios::binary) << text;
  }

  std::unique_ptr<Store> m_store;
  std::ostringstream m_progress;
};

TEST_F(Maintenance, VerifyQuarantinesCorruptBlobsAndDropsTheirRows) {
  const auto a = add_set("vision", "tier-new", 1);
  const auto b = add_set("caffe", "tier-new", 2);
  overwrite(a.files[1].sha256, "own flipped");
  const auto report = verify_store(*m_store, m_progress);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->blobs, 7u);  // 2 x (manifest, own, log) + shared
  ASSERT_EQ(report->corrupt.size(), 1u);
  const auto& bad = report->corrupt.front();
  EXPECT_EQ(bad.digest, a.files[1].sha256);
  EXPECT_EQ(bad.dropped, std::vector{a.manifest});
  EXPECT_EQ(slurp(bad.moved_to), "own flipped");
  EXPECT_EQ(bad.moved_to.parent_path(), m_store->quarantine_dir());
  EXPECT_FALSE(m_store->has_blob(a.files[1].sha256));
  const auto rows = m_store->index().list().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.front().manifest, b.manifest);
  // A second run finds a healthy store.
  const auto again = verify_store(*m_store, m_progress);
  EXPECT_TRUE(again->corrupt.empty());
  EXPECT_TRUE(again->missing.empty());
}

TEST_F(Maintenance, VerifyDropsRowsWhoseBlobsAreGone) {
  const auto a = add_set("vision", "tier-new", 1);
  fs::remove(m_store->blob_path(*a.build_log));
  const auto report = verify_store(*m_store, m_progress);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->missing, std::vector<std::string>{a.build_log->hex()});
  EXPECT_TRUE(m_store->index().list()->empty());
}

TEST_F(Maintenance, GcKeepsTheNewestPerRecipeAndTier) {
  const auto old1 = add_set("vision", "tier-new", 1);
  const auto old2 = add_set("vision", "tier-new", 2);
  const auto newest = add_set("vision", "tier-new", 3);
  const auto other_tier = add_set("vision", "tier-old", 1);
  const auto stray = m_store->put_bytes("nobody names me").value();
  const auto report = collect_garbage(*m_store, {.keep = 1}, m_progress);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->removed_sets, (std::vector{old2.manifest, old1.manifest}));
  EXPECT_EQ(report->removed_blobs, 7u);  // 2 x (manifest, own, log) + the stray
  const auto rows = m_store->index().list().value();
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& kept : {newest, other_tier}) {
    EXPECT_TRUE(m_store->has_blob(kept.manifest));
    for (const auto& f : kept.files) EXPECT_TRUE(m_store->has_blob(f.sha256));
    EXPECT_TRUE(m_store->has_blob(*kept.build_log));
  }
  EXPECT_FALSE(m_store->has_blob(old1.manifest));
  EXPECT_FALSE(m_store->has_blob(old2.files[1].sha256));
  EXPECT_FALSE(m_store->has_blob(stray.digest));
}

TEST_F(Maintenance, GcWithoutKeepRemovesOnlyGarbageAndCrashLeftovers) {
  const auto a = add_set("vision", "tier-new", 1);
  const auto b = add_set("vision", "tier-new", 2);
  write("store/tmp/blob.123.0.tmp", "half a blob");
  write("store/tmp/not-ours", "left alone");
  const auto report = collect_garbage(*m_store, {}, m_progress);
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->removed_sets.empty());
  EXPECT_EQ(report->removed_blobs, 0u);
  EXPECT_EQ(report->tmp.removed_temps, 1u);
  EXPECT_FALSE(fs::exists(m_dir / "store/tmp/blob.123.0.tmp"));
  EXPECT_TRUE(fs::exists(m_dir / "store/tmp/not-ours"));
  EXPECT_EQ(m_store->index().list()->size(), 2u);
}

// A build killed mid-way leaves its scratch tree; gc takes it (and says how
// much it held) and leaves the tree of a build still running.
TEST_F(Maintenance, GcRemovesTheTreesOfGoneBuildsAndLeavesLiveOnes) {
  const pid_t child = ::fork();
  if (child == 0) {
    auto tree = ScratchTree::create(m_store->tmp_dir(), "vision-tier-new");
    if (tree) std::ofstream(tree->path() / "big.o") << std::string(5000, 'o');
    ::_exit(tree ? 0 : 1);  // no destructor, no removal: as a kill would leave it
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto live = ScratchTree::create(m_store->tmp_dir(), "vision-tier-old");
  ASSERT_TRUE(live);
  std::ofstream(live->path() / "half.o") << "half";
  const auto report = collect_garbage(*m_store, {}, m_progress);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->tmp.scratch.removed, 1u);
  EXPECT_EQ(report->tmp.scratch.bytes, 5000u);
  EXPECT_EQ(report->tmp.scratch.in_use, std::vector<fs::path>{live->path()});
  EXPECT_EQ(slurp(live->path() / "half.o"), "half");
  std::vector<fs::path> left;
  for (const auto& e : fs::directory_iterator(m_store->tmp_dir())) left.push_back(e.path());
  EXPECT_EQ(left, std::vector<fs::path>{live->path()});
}

// gc waits for a writer's Pin: what is put under a Pin survives until the
// row naming it exists.
TEST_F(Maintenance, GcWaitsForPinnedWriters) {
  const auto blob = m_store->put_bytes("on its way").value();
  auto pin = m_store->pin();
  ASSERT_TRUE(pin);
  const pid_t child = ::fork();
  if (child == 0) {
    auto other = Store::open(m_dir / "store");
    std::ostringstream progress;
    const auto r = other ? collect_garbage(*other, {}, progress) : std::unexpected(other.error());
    ::_exit(r && r->removed_blobs == 0 ? 0 : 1);
  }
  ::usleep(300'000);  // the child is now waiting for the lock
  IndexEntry e{.manifest = blob.digest, .recipe = "r", .tier = "t", .created = 1};
  ASSERT_TRUE(m_store->record(e));
  { auto released = std::move(*pin); }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(m_store->has_blob(blob.digest));
}

}  // namespace
}  // namespace orc::cache
