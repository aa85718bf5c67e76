// The store keeps each byte once (issue 11): a build stores the files, not
// a pack beside them; push packs them, deterministically; a pack an older
// store kept beside the files is dropped by gc once the files make it again
// byte for byte, and kept (and pushed) when they do not.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "built_sets.hpp"
#include "orchestrator/cache/maintenance.hpp"
#include "orchestrator/digest/sha256.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;

class PackOnce : public testing::BuiltSets {
 protected:
  digest::Digest hash_of(const fs::path& file) {
    const std::string bytes = slurp(file);
    return digest::sha256(std::as_bytes(std::span(bytes.data(), bytes.size())));
  }
  digest::Digest packed_from_blobs(const Store& store, const IndexEntry& entry, const std::string& name) {
    const fs::path out = m_dir / name;
    const auto packed = pack_stored_set(store, entry, out);
    EXPECT_TRUE(packed) << packed.error().message;
    return hash_of(out);
  }
  std::uint64_t blob_bytes() const {
    std::uint64_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(root() / "blobs.v1"))
      if (e.is_regular_file()) n += e.file_size();
    return n;
  }
  std::ostringstream m_progress;
};

TEST_F(PackOnce, ABuildStoresItsFilesOnceAndNoPack) {
  Store store = Store::open(root()).value();
  // Enough bytes that a second copy (a pack) could not hide in the small blobs.
  const std::string big(3 << 20, 'x');
  const auto data = write("src/data.bin", big);
  Manifest m = testing::sample_manifest();
  m.created.clear();
  m.build_log.reset();
  m.files.resize(1);
  m.files[0].path = "data.bin";
  const auto entry = store_artifact_set(store, {.manifest = m, .sources = {data}, .key = &*m_key, .verified = true});
  ASSERT_TRUE(entry) << entry.error().message;
  EXPECT_FALSE(entry->pack);
  const std::uint64_t small = store.read_blob(entry->manifest)->size() + store.read_blob(*entry->signature)->size();
  EXPECT_EQ(blob_bytes(), big.size() + small);
  EXPECT_EQ(count_blobs(), 3u);  // the file, the manifest, the signature
}

TEST_F(PackOnce, APackOfTheBlobsIsTheBytesAPackOfTheSourcesWas) {
  Store store = Store::open(root()).value();
  const IndexEntry entry = build(store, "vision", "tier-new");
  // What a build stored beside the files before: packed from the build's
  // own files, with their modes (the tool is 0755), mtimes and owners.
  const fs::path old_pack = m_dir / "old.tar.zst";
  ASSERT_TRUE(pack(sources_of("vision", "tier-new"), old_pack));
  const digest::Digest first = packed_from_blobs(store, entry, "first.tar.zst");
  EXPECT_EQ(first, hash_of(old_pack));
  EXPECT_EQ(packed_from_blobs(store, entry, "second.tar.zst"), first);
  // The same from another store that holds the same set (a pull's copy).
  Store other = Store::open(m_dir / "other").value();
  IndexEntry copy = entry;
  for (const auto& f : entry.files) ASSERT_TRUE(other.put_file(store.blob_path(f.sha256)));
  EXPECT_EQ(packed_from_blobs(other, copy, "third.tar.zst"), first);
}

// The key push remembers a pack by changes with anything that changes the
// pack's bytes (a path, a digest, a mode), and with nothing else.
TEST_F(PackOnce, ThePackKeyFollowsPathsDigestsAndModes) {
  Store store = Store::open(root()).value();
  const IndexEntry entry = build(store, "vision", "tier-new");
  const std::string key = pack_key(entry);
  IndexEntry other = entry;
  other.manifest = digest::Digest();
  other.created += 100;
  std::ranges::reverse(other.files);
  EXPECT_EQ(pack_key(other), key);
  for (auto change : {+[](IndexedFile& f) { f.mode = 0600; }, +[](IndexedFile& f) { f.path += "x"; },
                      +[](IndexedFile& f) { f.sha256[0] ^= 1; }}) {
    IndexEntry changed = entry;
    change(changed.files[0]);
    EXPECT_NE(pack_key(changed), key);
  }
}

TEST_F(PackOnce, GcDropsAnOldPackTheFilesMakeAgainByteForByte) {
  Store store = Store::open(root()).value();
  const IndexEntry entry = add_old_pack(store, build(store, "vision", "tier-new"), sources_of("vision", "tier-new"));
  ASSERT_TRUE(store.has_blob(*entry.pack));
  const auto gc = collect_garbage(store, {}, m_progress);
  ASSERT_TRUE(gc) << gc.error().message;
  EXPECT_EQ(gc->dropped_packs, std::vector{entry.manifest});
  EXPECT_EQ(gc->removed_blobs, 1u);
  EXPECT_FALSE(store.has_blob(*entry.pack));
  const auto row = store.index().resolve(digest::DigestPrefix(entry.manifest)).value();
  EXPECT_FALSE(row.pack);
  EXPECT_EQ(row.id, entry.id);        // the same row: its place among sets of one second kept
  EXPECT_EQ(row.files, entry.files);  // modes included
  for (const auto& f : row.files) EXPECT_TRUE(store.has_blob(f.sha256));
  // Push now packs the files into the layer the old pack was.
  EXPECT_EQ(packed_from_blobs(store, row, "layer.tar.zst"), entry.pack);
  const auto again = collect_garbage(store, {}, m_progress);
  EXPECT_TRUE(again->dropped_packs.empty());
  EXPECT_EQ(again->removed_blobs, 0u);
}

// A set whose library was a symlink: the old pack holds the link, the blob
// its target's bytes, so the files do not make that pack again. It stays.
TEST_F(PackOnce, GcKeepsAnOldPackTheFilesDoNotMakeAgain) {
  Store store = Store::open(root()).value();
  const IndexEntry entry = build(store, "vision", "tier-new");
  auto sources = sources_of("vision", "tier-new");
  fs::rename(sources[1].source, m_dir / "src-vision-tier-new" / "lib.so.1");
  fs::create_symlink("lib.so.1", sources[1].source);
  const IndexEntry packed = add_old_pack(store, entry, sources);
  const auto gc = collect_garbage(store, {}, m_progress);
  ASSERT_TRUE(gc) << gc.error().message;
  EXPECT_TRUE(gc->dropped_packs.empty());
  EXPECT_TRUE(store.has_blob(*packed.pack));
  EXPECT_EQ(store.index().resolve(digest::DigestPrefix(entry.manifest))->pack, packed.pack);
  // What the files do pack to is remembered, so the next gc packs nothing.
  const auto remembered = store.index().packed_layer(pack_key(entry)).value();
  ASSERT_TRUE(remembered);
  EXPECT_NE(remembered->digest, packed.pack);
  EXPECT_EQ(remembered->digest, packed_from_blobs(store, entry, "files.tar.zst"));
}

}  // namespace
}  // namespace orc::cache
