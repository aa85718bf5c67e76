// Smoke outcomes attested in a stored set's signed manifest.
#include "orchestrator/app/smoke_attest.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

class SmokeAttest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-smoke-attest-" + std::to_string(::getpid()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    auto store = cache::Store::open(m_dir / "store");
    ASSERT_TRUE(store) << store.error().message;
    m_store.emplace(std::move(*store));
    auto made = cache::generate_key(m_dir / "keys");
    ASSERT_TRUE(made) << made.error().message;
    auto key = cache::load_signing_key(m_dir / "keys");
    ASSERT_TRUE(key) << key.error().message;
    m_key.emplace(std::move(*key));
    auto trusted = cache::load_trusted_keys(m_dir / "keys");
    ASSERT_TRUE(trusted);
    m_trusted = *trusted;

    std::ofstream(m_dir / "saxpy", std::ios::binary) << "not really an ELF, but bytes";
    fs::permissions(m_dir / "saxpy", fs::perms(0755));
    cache::NewArtifactSet set;
    set.manifest = cache::Manifest{.recipe = "saxpy",
                                   .framework = "nvcc",
                                   .tier = "tier-new",
                                   .key = "k1",
                                   .source_kind = "path",
                                   .source_revision = "tree:1",
                                   .engine = "host",
                                   .image = "host",
                                   .toolkit = "13.0"};
    set.manifest.files.push_back({.path = "saxpy", .requested_sass = {"sm_90"}, .embedded_sass = {"sm_90"}});
    set.sources = {m_dir / "saxpy"};
    set.key = &*m_key;
    set.verified = true;
    auto entry = cache::store_artifact_set(*m_store, std::move(set));
    ASSERT_TRUE(entry) << entry.error().message;
    m_manifest = entry->manifest;
  }
  void TearDown() override { fs::remove_all(m_dir); }

  static smoke::SmokeResult result(bool pass) {
    smoke::SmokeResult r;
    r.tier = "tier-new";
    r.driver_version = "580.159.04";
    smoke::GpuResult g;
    g.name = "NVIDIA H200";
    g.cc = *arch::ComputeCapability::parse("9.0");
    g.load = smoke::LoadObservation{.outcome = pass ? smoke::LoadOutcome::native : smoke::LoadOutcome::none};
    r.gpus.push_back(g);
    return r;
  }

  fs::path m_dir;
  std::optional<cache::Store> m_store;
  std::optional<cache::SigningKey> m_key;
  cache::TrustedKeys m_trusted;
  std::string m_manifest;
};

TEST_F(SmokeAttest, ArgumentsNamingSetsAreDigestPrefixes) {
  EXPECT_TRUE(names_artifact_set("sha256:abcd"));
  EXPECT_TRUE(names_artifact_set("abcd12"));
  EXPECT_FALSE(names_artifact_set("abc")) << "too short to be a prefix";
  EXPECT_FALSE(names_artifact_set("build/saxpy"));
  EXPECT_FALSE(names_artifact_set("sha256:xyz0"));
}

TEST_F(SmokeAttest, APassIsRecordedInANewSignedManifestThatFetchFindsFirst) {
  const AttestTarget target = resolve_artifact_set(*m_store, "sha256:" + m_manifest.substr(0, 8));
  EXPECT_EQ(target.entry.manifest, m_manifest);
  ASSERT_EQ(target.files.size(), 1u);
  EXPECT_TRUE(fs::exists(target.files[0]));

  const std::string attested = attest_artifact_set(*m_store, target, result(true), "tier-new", &*m_key);
  EXPECT_NE(attested, m_manifest) << "the attestation is part of the manifest, so its digest changes";
  auto newest = m_store->index().newest_verified("saxpy", "tier-new");
  ASSERT_TRUE(newest && *newest);
  EXPECT_EQ((*newest)->manifest, attested);
  EXPECT_EQ((*newest)->files.at(0).sha256, target.entry.files.at(0).sha256) << "the same file blob";
  EXPECT_EQ(target.entry.files.at(0).mode, 0755u);
  EXPECT_EQ((*newest)->files.at(0).mode, 0755u) << "the file's mode, not the blob's";

  auto loaded = cache::load_artifact_set(*m_store, **newest, m_trusted);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->signature.status, cache::VerifyStatus::verified) << loaded->signature.detail;
  ASSERT_EQ(loaded->manifest.smoke.count("tier-new"), 1u);
  const auto& runs = loaded->manifest.smoke.at("tier-new");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].gpu, "NVIDIA H200");
  EXPECT_EQ(runs[0].cc, "9.0");
  EXPECT_EQ(runs[0].driver, "580.159.04");
  EXPECT_EQ(runs[0].outcome, "pass");

  // A second run for the tier replaces the first one's record.
  const AttestTarget again = resolve_artifact_set(*m_store, attested);
  const std::string failed = attest_artifact_set(*m_store, again, result(false), "tier-new", &*m_key);
  auto reloaded = cache::load_artifact_set(*m_store, *m_store->index().resolve(failed), m_trusted);
  ASSERT_TRUE(reloaded);
  ASSERT_EQ(reloaded->manifest.smoke.at("tier-new").size(), 1u);
  EXPECT_EQ(reloaded->manifest.smoke.at("tier-new")[0].outcome, "fail");
}

TEST_F(SmokeAttest, AnUnknownDigestIsBadInput) {
  try {
    resolve_artifact_set(*m_store, "sha256:ffffffff");
    FAIL() << "resolved a digest nobody stored";
  } catch (const util::Failure& f) {
    EXPECT_EQ(f.code(), util::ExitCode::bad_input) << f.what();
  }
}

}  // namespace
}  // namespace orc::app
