// Ed25519 keys, their files, and the distinct outcomes of verification.
#include "orchestrator/cache/signing.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "orchestrator/cache/keys.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

class Signing : public testing::TempDirTest {};

TEST_F(Signing, GenerateWritesPrivateKey0600AndTrustsItself) {
  const auto keys = m_dir / "keys";
  const auto made = generate_key(keys);
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(made->key_id.size(), 16u);
  struct stat st {};
  ASSERT_EQ(::stat(made->private_key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto key = load_signing_key(keys);
  ASSERT_TRUE(key);
  EXPECT_EQ(key->public_key().key_id(), made->key_id);
  EXPECT_EQ(load_public_key(keys)->key_id(), made->key_id);
  const auto trusted = load_trusted_keys(keys);
  ASSERT_TRUE(trusted);
  EXPECT_TRUE(trusted->contains(made->key_id));
  // A second generate keeps the key unless forced.
  const auto again = generate_key(keys);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, ErrorKind::invalid);
  EXPECT_EQ(load_signing_key(keys)->public_key().key_id(), made->key_id);
  const auto forced = generate_key(keys, Overwrite::yes);
  ASSERT_TRUE(forced);
  EXPECT_NE(forced->key_id, made->key_id);
  // No temporaries are left in the keys directory.
  EXPECT_TRUE(std::filesystem::is_empty(keys / ".tmp"));
}

TEST_F(Signing, MissingKeyNamesTheCommandToRun) {
  const auto key = load_signing_key(m_dir / "none");
  ASSERT_FALSE(key);
  EXPECT_EQ(key.error().kind, ErrorKind::not_found);
  EXPECT_NE(key.error().message.find("orchestrate key generate"), std::string::npos);
}

TEST_F(Signing, KeyIdIsSha256OfTheRawPublicKey) {
  const auto key = SigningKey::generate();
  ASSERT_TRUE(key);
  const auto reparsed = PublicKey::from_pem(key->public_key().pem());
  ASSERT_TRUE(reparsed);
  EXPECT_EQ(reparsed->key_id(), key->public_key().key_id());
  const auto again = SigningKey::from_pem(key->pem());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->public_key().key_id(), key->public_key().key_id());
  EXPECT_FALSE(PublicKey::from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"));
  EXPECT_FALSE(SigningKey::from_pem(key->public_key().pem()));
}

TEST_F(Signing, VerifyDistinguishesEveryOutcome) {
  const auto key = SigningKey::generate().value();
  const auto other = SigningKey::generate().value();
  const TrustedKeys trusted{{key.public_key().key_id(), key.public_key()}};
  const std::string manifest = canonical_json(testing::sample_manifest());
  const std::string signature = signature_json(sign_manifest(key, manifest));

  EXPECT_EQ(verify_manifest(manifest, signature, trusted).status, VerifyStatus::verified);
  EXPECT_EQ(verify_manifest(manifest, std::nullopt, trusted).status, VerifyStatus::not_signed);

  std::string tampered = manifest;
  tampered[tampered.find("12.4")] = '9';  // one byte of the manifest
  EXPECT_EQ(verify_manifest(tampered, signature, trusted).status, VerifyStatus::digest_mismatch);

  // A signature by a key that is not trusted.
  const std::string by_other = signature_json(sign_manifest(other, manifest));
  const auto unknown = verify_manifest(manifest, by_other, trusted);
  EXPECT_EQ(unknown.status, VerifyStatus::unknown_key);
  EXPECT_EQ(unknown.key_id, other.public_key().key_id());

  // Another key's signature under the trusted key's id.
  auto forged = sign_manifest(other, manifest);
  forged.key_id = key.public_key().key_id();
  EXPECT_EQ(verify_manifest(manifest, signature_json(forged), trusted).status, VerifyStatus::bad_signature);

  // One flipped bit of the signature itself.
  auto flipped = sign_manifest(key, manifest);
  flipped.signature[10] ^= 0x01;
  EXPECT_EQ(verify_manifest(manifest, signature_json(flipped), trusted).status, VerifyStatus::bad_signature);

  EXPECT_EQ(verify_manifest(manifest, std::string("{}"), trusted).status, VerifyStatus::bad_signature);
}

TEST_F(Signing, SignatureDocumentIsStrict) {
  const auto key = SigningKey::generate().value();
  const auto doc = sign_manifest(key, "bytes");
  const std::string text = signature_json(doc);
  EXPECT_TRUE(text.starts_with(R"({"algorithm":"ed25519","key_id":")")) << text;
  const auto parsed = parse_signature(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->signature, doc.signature);
  EXPECT_EQ(parsed->signed_digest, doc.signed_digest);
  for (const std::string& bad :
       {std::string("[]"), std::string(R"({"schema_version":2})"), text.substr(0, text.size() - 2),
        std::string(
            R"({"algorithm":"rsa","key_id":"0123456789abcdef","schema_version":1,"signature":"","signed_digest":""})")})
    EXPECT_FALSE(parse_signature(bad)) << bad;
}

// The signed digest is parsed where the document is read: one that is not
// sha256:<64 lowercase hex> (a tampered or foreign document, from the store
// or a registry) is refused with what is wrong with it.
TEST_F(Signing, AMalformedSignedDigestIsRefusedWithItsReason) {
  const auto key = SigningKey::generate().value();
  std::string text = signature_json(sign_manifest(key, "bytes"));
  const auto at = text.find("sha256:") + 7;
  text[at] = 'A';
  const auto parsed = parse_signature(text);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().kind, ErrorKind::invalid);
  EXPECT_TRUE(parsed.error().message.starts_with("signature signed_digest is not sha256:<hex>: digest 'sha256:A"))
      << parsed.error().message;
  EXPECT_NE(parsed.error().message.find("an uppercase hex digit at position 1 of its 64"), std::string::npos)
      << parsed.error().message;
}

TEST_F(Signing, TrustFromTextsAndPathsAndTheTrustStore) {
  const auto a = SigningKey::generate().value();
  const auto b = SigningKey::generate().value();
  const auto b_file = write("b.pem", b.public_key().pem());
  TrustedKeys keys;
  const std::vector<std::string> items{a.public_key().pem(), b_file.string()};
  ASSERT_TRUE(add_trusted_keys(items, keys));
  EXPECT_EQ(keys.size(), 2u);
  EXPECT_TRUE(keys.contains(b.public_key().key_id()));
  const std::vector<std::string> broken{(m_dir / "missing.pem").string()};
  EXPECT_FALSE(add_trusted_keys(broken, keys));

  const auto id = trust_key(m_dir / "keys", a.public_key().pem());
  ASSERT_TRUE(id);
  EXPECT_EQ(*id, a.public_key().key_id());
  EXPECT_TRUE(std::filesystem::exists(m_dir / "keys" / "trusted" / (*id + ".pem")));
  EXPECT_FALSE(trust_key(m_dir / "keys", "not a key"));
  // A broken file in the trust store is an error, not a smaller store.
  write("keys/trusted/junk.pem", "junk");
  const auto loaded = load_trusted_keys(m_dir / "keys");
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find("junk.pem"), std::string::npos);
}

TEST(Base64, RoundTripsAndRefusesOtherSpellings) {
  for (const std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    const auto decoded = base64_decode(base64_encode(s));
    ASSERT_TRUE(decoded) << s;
    EXPECT_EQ(*decoded, s);
  }
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_FALSE(base64_decode("Zm9"));
  EXPECT_FALSE(base64_decode("Zm9v!mFy"));
}

}  // namespace
}  // namespace orc::cache
