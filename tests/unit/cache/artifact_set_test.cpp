// A build's round trip through the store: files, log and signed manifest
// in; manifest, signature verdict and files back.
#include "orchestrator/cache/artifact_set.hpp"

#include <gtest/gtest.h>

#include "orchestrator/cache/pack.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;

class ArtifactSet : public testing::TempDirTest {
 protected:
  NewArtifactSet new_set(const SigningKey* key) {
    Manifest m = testing::sample_manifest();
    m.created.clear();
    m.build_log.reset();
    return {.manifest = m,
            .sources = {write("out/libvision.so", "so bytes"), write("out/vision.whl", "wheel bytes")},
            .build_log = write("build.log", "log lines\n"),
            .key = key,
            .verified = true};
  }
};

TEST_F(ArtifactSet, StoresSignedAndLoadsVerified) {
  Store store = Store::open(m_dir / "store").value();
  const SigningKey key = SigningKey::generate().value();
  const auto stored = store_artifact_set(store, new_set(&key));
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->signer, key.public_key().key_id());
  EXPECT_EQ(stored->sass.names(), (std::vector<std::string>{"sm_80", "sm_86"}));
  EXPECT_EQ(stored->ptx.names(), (std::vector<std::string>{"compute_90"}));
  ASSERT_EQ(stored->files.size(), 2u);
  EXPECT_EQ(store.read_blob(stored->files[0].sha256).value(), "so bytes");
  EXPECT_EQ(stored->files[1].size, 11u);
  EXPECT_EQ(store.index().newest_verified("vision-ext", "tier-new").value()->manifest, stored->manifest);

  const TrustedKeys trusted{{key.public_key().key_id(), key.public_key()}};
  const auto loaded = load_artifact_set(store, *stored, trusted);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->signature.status, VerifyStatus::verified);
  EXPECT_EQ(loaded->manifest.files[0].sha256, stored->files[0].sha256);
  EXPECT_EQ(loaded->manifest.build_log, stored->build_log);
  EXPECT_FALSE(loaded->manifest.created.empty());
  EXPECT_EQ(load_artifact_set(store, *stored, {})->signature.status, VerifyStatus::unknown_key);

  // No pack is stored; the one push makes from the blobs unpacks to the same files.
  EXPECT_FALSE(stored->pack);
  ASSERT_TRUE(pack_stored_set(store, *stored, m_dir / "layer.tar.zst"));
  const auto files = unpack(m_dir / "layer.tar.zst", m_dir / "fetched");
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(slurp(m_dir / "fetched/lib/libvision.so"), "so bytes");
  EXPECT_EQ(slurp(m_dir / "fetched/vision.whl"), "wheel bytes");
}

// Each file's mode goes into the signed manifest (the caller's, else the
// source's, never setuid), the index row and the pack alike.
TEST_F(ArtifactSet, ModesAreSignedWithTheFiles) {
  Store store = Store::open(m_dir / "store").value();
  NewArtifactSet set = new_set(nullptr);
  fs::permissions(set.sources[0], static_cast<fs::perms>(0750));
  set.modes = {};
  auto stored = store_artifact_set(store, set);
  ASSERT_TRUE(stored) << stored.error().message;
  auto manifest = parse_manifest(store.read_blob(stored->manifest).value()).value();
  EXPECT_EQ(manifest.files[0].mode, 0750u);
  EXPECT_EQ(stored->files[0].mode, 0750u);
  ASSERT_TRUE(pack_stored_set(store, *stored, m_dir / "layer.tar.zst"));
  const auto files = unpack(m_dir / "layer.tar.zst", m_dir / "fetched");
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ((*files)[0].mode, 0750u);

  set.manifest.recipe = "given";
  set.modes = {04755, 0644};
  stored = store_artifact_set(store, set);
  ASSERT_TRUE(stored) << stored.error().message;
  manifest = parse_manifest(store.read_blob(stored->manifest).value()).value();
  EXPECT_EQ(manifest.files[0].mode, 0755u);
  EXPECT_EQ(manifest.files[1].mode, 0644u);
}

// A file larger than one chunk gets its chunk digests in the signed
// manifest, hashed from the stored bytes; a small one gets none.
TEST_F(ArtifactSet, LargeFilesGetChunkDigestsInTheSignedManifest) {
  Store store = Store::open(m_dir / "store").value();
  NewArtifactSet set = new_set(nullptr);
  std::string big((9 << 20) + 3, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + i / 4099);
  set.sources[0] = write("out/libbig.so", big);
  const auto stored = store_artifact_set(store, std::move(set));
  ASSERT_TRUE(stored) << stored.error().message;
  const auto loaded = load_artifact_set(store, *stored, {});
  ASSERT_TRUE(loaded) << loaded.error().message;
  const ManifestFile& file = loaded->manifest.files[0];
  EXPECT_EQ(file.size, big.size());
  EXPECT_EQ(file.chunks.size, 4u << 20);
  ASSERT_EQ(file.chunks.sha256.size(), 3u);
  for (std::size_t c = 0; c < 3; ++c) {
    const std::string_view slice = std::string_view(big).substr(c * (4 << 20), 4 << 20);
    EXPECT_EQ(file.chunks.sha256[c], digest::sha256(std::as_bytes(std::span(slice.data(), slice.size()))).hex());
  }
  EXPECT_EQ(loaded->manifest.files[1].chunks, FileChunks{});
}

TEST_F(ArtifactSet, UnsignedAndDamagedSets) {
  Store store = Store::open(m_dir / "store").value();
  const auto stored = store_artifact_set(store, new_set(nullptr));
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_TRUE(stored->signer.empty());
  EXPECT_EQ(load_artifact_set(store, *stored, {})->signature.status, VerifyStatus::not_signed);

  std::filesystem::remove(store.blob_path(stored->files[1].sha256));
  const auto gone = load_artifact_set(store, *stored, {});
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().kind, ErrorKind::corrupt);

  // A manifest of a schema this version does not read is a miss.
  IndexEntry foreign = *stored;
  foreign.manifest = store.put_bytes(R"({"schema_version": 9})").value().digest;
  EXPECT_EQ(load_artifact_set(store, foreign, {}).error().kind, ErrorKind::not_found);

  NewArtifactSet mismatched = new_set(nullptr);
  mismatched.sources.pop_back();
  EXPECT_EQ(store_artifact_set(store, mismatched).error().kind, ErrorKind::invalid);
}

}  // namespace
}  // namespace orc::cache
