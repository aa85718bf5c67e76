#pragma once
// A store filled the way `orchestrate build` fills it (store_artifact_set:
// files, log, signed manifest, index row), for the tests of what damage to
// the index may and may not do to it.
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/pack.hpp"
#include "test_support.hpp"

namespace orc::cache::testing {

// Writes `version` as the index's schema_version, as a newer orchestrate would.
inline void set_schema_version(const std::filesystem::path& index, const std::string& version) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(index.c_str(), &db), SQLITE_OK);
  const std::string sql = "UPDATE meta SET value = '" + version + "' WHERE key = 'schema_version'";
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

class BuiltSets : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    m_key = SigningKey::generate().value();
    m_trusted = {{m_key->public_key().key_id(), m_key->public_key()}};
  }

  std::filesystem::path root() const { return m_dir / "store"; }
  std::filesystem::path index_file() const { return root() / "index.v1.sqlite"; }

  // One set: an executable (0755), a library, and a log; signed.
  IndexEntry build(Store& store, const std::string& recipe, const std::string& tier) {
    Manifest m = sample_manifest(recipe, tier);
    m.created.clear();
    m.build_log.reset();
    m.files[0].path = "bin/" + recipe;
    m.files[1].path = "lib/lib" + recipe + ".so";
    const std::string dir = "src-" + recipe + "-" + tier + "/";
    const auto tool = write(dir + "tool", "tool of " + recipe + " for " + tier);
    std::filesystem::permissions(tool, std::filesystem::perms(0755));
    NewArtifactSet set{.manifest = m,
                       .sources = {tool, write(dir + "lib.so", "library of " + recipe + " for " + tier)},
                       .build_log = write(dir + "build.log", "log of " + recipe + " for " + tier + "\n"),
                       .key = &*m_key,
                       .verified = true};
    auto stored = store_artifact_set(store, std::move(set));
    EXPECT_TRUE(stored) << stored.error().message;
    return stored.value_or(IndexEntry{});
  }

  // The files build() stored for recipe x tier, as pack() takes them.
  std::vector<PackEntry> sources_of(const std::string& recipe, const std::string& tier) const {
    const std::filesystem::path dir = m_dir / ("src-" + recipe + "-" + tier);
    return {{"bin/" + recipe, dir / "tool", std::nullopt}, {"lib/lib" + recipe + ".so", dir / "lib.so", std::nullopt}};
  }

  // Adds a pack of `sources` to the set's row, as stores did before push
  // made the pack from the files.
  IndexEntry add_old_pack(Store& store, IndexEntry entry, const std::vector<PackEntry>& sources) {
    const std::filesystem::path pack_file = m_dir / ("old-pack-" + entry.manifest.hex() + ".tar.zst");
    EXPECT_TRUE(pack(sources, pack_file));
    entry.pack = store.put_file(pack_file).value().digest;
    const auto recorded = store.record(entry);
    EXPECT_TRUE(recorded);
    entry.id = recorded.value_or(0);
    return entry;
  }

  // Three sets in a store that is then closed (the index folded out of its
  // -wal into the one file, as after every command); returns their rows.
  std::vector<IndexEntry> build_three() {
    Store store = Store::open(root()).value();
    build(store, "vision", "tier-new");
    build(store, "vision", "tier-old");
    build(store, "caffe", "tier-new");
    return rows(store);
  }

  static std::vector<IndexEntry> rows(const Store& store) {
    auto listed = store.index().list().value();
    for (auto& e : listed) e.id = 0;
    return listed;
  }

  std::size_t count_blobs() const {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root() / "blobs.v1"))
      n += e.is_regular_file() ? 1 : 0;
    return n;
  }

  // Random bytes over the whole index file, or all of it after `keep` bytes.
  void scramble_index(std::size_t keep = 0) {
    std::string bytes = slurp(index_file());
    std::mt19937 random(7);
    for (std::size_t i = keep; i < bytes.size(); ++i) bytes[i] = static_cast<char>(random());
    std::ofstream(index_file(), std::ios::binary | std::ios::trunc) << bytes;
  }

  std::optional<SigningKey> m_key;
  TrustedKeys m_trusted;
};

}  // namespace orc::cache::testing
