#pragma once
// Ed25519 signatures over manifests (OpenSSL EVP, kept out of this header).
//
// A signature is a detached document, canonical JSON, stored as its own blob:
//   {"algorithm": "ed25519", "key_id": "<16 hex>", "schema_version": 1,
//    "signature": "<base64 of 64 bytes>", "signed_digest": "sha256:<hex>"}
// It signs the manifest's canonical bytes themselves (pure Ed25519, no
// prehash); signed_digest names them so a signature cannot be moved onto
// another manifest unnoticed. A key id is the first 16 hex digits of the
// SHA-256 of the 32-byte raw public key.
#include <expected>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/digest/digest.hpp"

namespace orc::cache {

class PublicKey {
 public:
  // An Ed25519 public key in PEM ("-----BEGIN PUBLIC KEY-----").
  static std::expected<PublicKey, Error> from_pem(std::string_view pem);
  const std::string& key_id() const { return m_key_id; }
  std::string pem() const;
  bool verify(std::string_view message, std::string_view signature) const;

 private:
  friend class SigningKey;
  explicit PublicKey(std::string raw);
  std::string m_raw;  // 32 bytes
  std::string m_key_id;
};

class SigningKey {
 public:
  static std::expected<SigningKey, Error> generate();
  // An Ed25519 private key in PEM (PKCS#8).
  static std::expected<SigningKey, Error> from_pem(std::string_view pem);
  SigningKey(const SigningKey&) = default;
  SigningKey& operator=(const SigningKey&) = default;
  ~SigningKey();

  std::string pem() const;
  const PublicKey& public_key() const { return m_public; }
  // The 64-byte signature of `message`.
  std::string sign(std::string_view message) const;

 private:
  SigningKey(std::string seed, PublicKey pub) : m_seed(std::move(seed)), m_public(std::move(pub)) {}
  std::string m_seed;  // 32 bytes; wiped on destruction
  PublicKey m_public;
};

// Trusted public keys by key id.
using TrustedKeys = std::map<std::string, PublicKey>;

struct SignatureDocument {
  static constexpr int k_schema_version = 1;
  std::string key_id;
  std::string algorithm = "ed25519";
  std::string signature;         // raw bytes (base64 in the document)
  digest::Digest signed_digest;  // of the manifest's canonical bytes
};

std::string signature_json(const SignatureDocument& doc);
// Strict: schema 1, algorithm ed25519, a 16-hex key id, 64 signature bytes.
std::expected<SignatureDocument, Error> parse_signature(std::string_view text);

SignatureDocument sign_manifest(const SigningKey& key, std::string_view manifest_bytes);

enum class VerifyStatus {
  verified,
  not_signed,       // no signature document
  unknown_key,      // signed by a key that is not trusted
  bad_signature,    // the signature does not verify, or the document is malformed
  digest_mismatch,  // the document signs other bytes than these
};
std::string_view to_string(VerifyStatus status);

struct Verification {
  VerifyStatus status = VerifyStatus::not_signed;
  std::string key_id;  // from the document, when there is one
  std::string detail;  // one sentence for the user
};

// `signature_text` is the signature document, or nullopt when there is none.
Verification verify_manifest(std::string_view manifest_bytes, const std::optional<std::string>& signature_text,
                             const TrustedKeys& trusted);

std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace orc::cache
