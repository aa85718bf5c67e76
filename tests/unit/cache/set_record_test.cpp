// The record fetch leaves in DIR (.orchestrate/set.v1): written from the
// store's bytes, read back with its digest and its signature checked; a
// changed manifest, an untrusted key and a set without a signature are told
// apart; a set's own file of the record's name is never replaced.
#include "orchestrator/cache/set_record.hpp"

#include <gtest/gtest.h>

#include "orchestrator/digest/sha256.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

class SetRecordTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    m_key = SigningKey::generate().value();
    m_trusted = {{m_key->public_key().key_id(), m_key->public_key()}};
    m_bytes = canonical_json(testing::sample_manifest("saxpy", "tier-new"));
    m_signature = signature_json(sign_manifest(*m_key, m_bytes));
  }
  std::optional<SigningKey> m_key;
  TrustedKeys m_trusted;
  std::string m_bytes, m_signature;
};

TEST_F(SetRecordTest, ReadsBackTheSetItsManifestAndAVerifiedSignature) {
  ASSERT_TRUE(write_set_record(m_dir / "out", m_bytes, m_signature));
  EXPECT_EQ(slurp(m_dir / "out/.orchestrate/set.v1/manifest.json"), m_bytes);
  const auto record = read_set_record(m_dir / "out", m_trusted);
  ASSERT_TRUE(record && *record) << (record ? "no record" : record.error().message);
  EXPECT_EQ((*record)->manifest.recipe, "saxpy");
  EXPECT_EQ((*record)->manifest.tier, "tier-new");
  EXPECT_EQ((*record)->digest, digest::sha256(std::string_view(m_bytes)));
  EXPECT_EQ((*record)->signature.status, VerifyStatus::verified);
  EXPECT_EQ((*record)->signature.key_id, m_key->public_key().key_id());
}

TEST_F(SetRecordTest, AChangedManifestAnUntrustedKeyAndNoSignatureAreToldApart) {
  ASSERT_TRUE(write_set_record(m_dir / "unsigned", m_bytes, std::nullopt));
  EXPECT_EQ(read_set_record(m_dir / "unsigned", m_trusted).value()->signature.status, VerifyStatus::not_signed);
  ASSERT_TRUE(write_set_record(m_dir / "stranger", m_bytes, m_signature));
  EXPECT_EQ(read_set_record(m_dir / "stranger", {}).value()->signature.status, VerifyStatus::unknown_key);
  // Another tier written into the manifest after it was signed.
  ASSERT_TRUE(write_set_record(m_dir / "changed", m_bytes, m_signature));
  std::string changed = m_bytes;
  changed.replace(changed.rfind("\"tier-new\""), 10, "\"tier-old\"");
  write("changed/.orchestrate/set.v1/manifest.json", changed);
  const auto record = read_set_record(m_dir / "changed", m_trusted);
  ASSERT_TRUE(record && *record);
  EXPECT_EQ((*record)->manifest.tier, "tier-old");
  EXPECT_EQ((*record)->signature.status, VerifyStatus::digest_mismatch);
}

TEST_F(SetRecordTest, NoRecordAnotherVersionAndAManifestThatIsNotOneAreSaid) {
  write("plain/lib.so", "x");
  EXPECT_FALSE(read_set_record(m_dir / "plain", m_trusted).value());
  write("v2/.orchestrate/set.v2/manifest.json", m_bytes);
  EXPECT_FALSE(read_set_record(m_dir / "v2", m_trusted).value());
  write("bad/.orchestrate/set.v1/manifest.json", "{\"schema_version\": 2, \"recipe\": 7}");
  const auto bad = read_set_record(m_dir / "bad", m_trusted);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid);
  EXPECT_NE(bad.error().message.find("bad/.orchestrate/set.v1/manifest.json: "), std::string::npos)
      << bad.error().message;
}

TEST_F(SetRecordTest, ASetFileWhereTheRecordGoesIsKept) {
  write("own/.orchestrate/set.v1/manifest.json", "the set's own file");
  const auto written = write_set_record(m_dir / "own", m_bytes, m_signature);
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().kind, ErrorKind::invalid);
  EXPECT_EQ(slurp(m_dir / "own/.orchestrate/set.v1/manifest.json"), "the set's own file");
}

}  // namespace
}  // namespace orc::cache
