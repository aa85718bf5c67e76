#include "orchestrator/cache/signing.hpp"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "orchestrator/cache/store.hpp"
#include "orchestrator/digest/sha256.hpp"

namespace orc::cache {

namespace {

constexpr std::size_t k_key_bytes = 32;
constexpr std::size_t k_signature_bytes = 64;
constexpr std::size_t k_key_id_hex = 16;

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Bio = std::unique_ptr<BIO, BioFree>;

const unsigned char* bytes_of(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

std::string sha256_of(std::string_view s) { return digest::sha256(std::as_bytes(std::span(s.data(), s.size()))).hex(); }

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

Bio memory_bio(std::string_view text) { return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size()))); }

std::optional<std::string> raw_key(EVP_PKEY* key, bool private_part) {
  std::string raw(k_key_bytes, '\0');
  std::size_t n = raw.size();
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  const int ok = private_part ? EVP_PKEY_get_raw_private_key(key, out, &n) : EVP_PKEY_get_raw_public_key(key, out, &n);
  if (ok != 1 || n != k_key_bytes) return std::nullopt;
  return raw;
}

bool is_ed25519(EVP_PKEY* key) { return key && EVP_PKEY_get_id(key) == EVP_PKEY_ED25519; }

}  // namespace

PublicKey::PublicKey(std::string raw) : m_raw(std::move(raw)), m_key_id(sha256_of(m_raw).substr(0, k_key_id_hex)) {}

std::expected<PublicKey, Error> PublicKey::from_pem(std::string_view pem) {
  const Bio bio = memory_bio(pem);
  const Pkey key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!is_ed25519(key.get())) return std::unexpected(invalid_error("not an Ed25519 public key in PEM"));
  auto raw = raw_key(key.get(), false);
  if (!raw) return std::unexpected(invalid_error("unreadable Ed25519 public key"));
  return PublicKey(std::move(*raw));
}

std::string PublicKey::pem() const {
  const Pkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, bytes_of(m_raw), m_raw.size()));
  const Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PUBKEY(bio.get(), key.get());
  return bio_text(bio.get());
}

bool PublicKey::verify(std::string_view message, std::string_view signature) const {
  if (signature.size() != k_signature_bytes) return false;
  const Pkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, bytes_of(m_raw), m_raw.size()));
  const std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  // Ed25519 hashes internally: the digest argument must be NULL.
  if (!key || !ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1) return false;
  return EVP_DigestVerify(ctx.get(), bytes_of(signature), signature.size(), bytes_of(message), message.size()) == 1;
}

SigningKey::~SigningKey() { OPENSSL_cleanse(m_seed.data(), m_seed.size()); }

std::expected<SigningKey, Error> SigningKey::generate() {
  const Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  auto seed = key ? raw_key(key.get(), true) : std::nullopt;
  auto pub = key ? raw_key(key.get(), false) : std::nullopt;
  if (!seed || !pub) return std::unexpected(io_error("OpenSSL could not generate an Ed25519 key"));
  return SigningKey(std::move(*seed), PublicKey(std::move(*pub)));
}

std::expected<SigningKey, Error> SigningKey::from_pem(std::string_view pem) {
  const Bio bio = memory_bio(pem);
  const Pkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!is_ed25519(key.get())) return std::unexpected(invalid_error("not an Ed25519 private key in PEM"));
  auto seed = raw_key(key.get(), true);
  auto pub = raw_key(key.get(), false);
  if (!seed || !pub) return std::unexpected(invalid_error("unreadable Ed25519 private key"));
  return SigningKey(std::move(*seed), PublicKey(std::move(*pub)));
}

std::string SigningKey::pem() const {
  const Pkey key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, bytes_of(m_seed), m_seed.size()));
  const Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  std::string text = bio_text(bio.get());
  return text;
}

std::string SigningKey::sign(std::string_view message) const {
  const Pkey key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, bytes_of(m_seed), m_seed.size()));
  const std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  std::string signature(k_signature_bytes, '\0');
  std::size_t n = signature.size();
  if (!key || !ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &n, bytes_of(message),
                     message.size()) != 1)
    return {};
  return signature;
}

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes_of(bytes), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * (text.size() / 4), '\0');
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes_of(text), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  std::size_t size = static_cast<std::size_t>(n);
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '=' && size > 0; --i) --size;
  out.resize(size);
  if (base64_encode(out) != text) return std::nullopt;  // one spelling per byte string
  return out;
}

std::string signature_json(const SignatureDocument& doc) {
  const nlohmann::json j{{"schema_version", SignatureDocument::k_schema_version},
                         {"algorithm", doc.algorithm},
                         {"key_id", doc.key_id},
                         {"signature", base64_encode(doc.signature)},
                         {"signed_digest", doc.signed_digest.to_string()}};
  return j.dump();
}

std::expected<SignatureDocument, Error> parse_signature(std::string_view text) {
  if (text.size() > 4096) return std::unexpected(invalid_error("signature document larger than 4096 bytes"));
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto text_of = [&](const char* key) -> std::string {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (!j.is_object() || j.size() != 5 || !j.contains("schema_version") || j["schema_version"] != 1)
    return std::unexpected(invalid_error("not a signature document of schema version 1"));
  SignatureDocument doc{.key_id = text_of("key_id"), .algorithm = text_of("algorithm")};
  const std::string digest = text_of("signed_digest");
  auto raw = base64_decode(text_of("signature"));
  if (doc.algorithm != "ed25519") return std::unexpected(invalid_error("signature algorithm is not ed25519"));
  if (doc.key_id.size() != k_key_id_hex || doc.key_id.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::unexpected(invalid_error("signature key_id is not 16 hex digits"));
  const auto signed_digest = digest::Digest::parse(digest);
  if (!signed_digest)
    return std::unexpected(invalid_error("signature signed_digest is not sha256:<hex>: " + signed_digest.error()));
  if (!raw || raw->size() != k_signature_bytes)
    return std::unexpected(invalid_error("signature is not 64 bytes of base64"));
  doc.signed_digest = *signed_digest;
  doc.signature = std::move(*raw);
  return doc;
}

SignatureDocument sign_manifest(const SigningKey& key, std::string_view manifest_bytes) {
  return {.key_id = key.public_key().key_id(),
          .algorithm = "ed25519",
          .signature = key.sign(manifest_bytes),
          .signed_digest = digest::sha256(manifest_bytes)};
}

std::string_view to_string(VerifyStatus status) {
  switch (status) {
    case VerifyStatus::verified:
      return "verified";
    case VerifyStatus::not_signed:
      return "unsigned";
    case VerifyStatus::unknown_key:
      return "unknown key";
    case VerifyStatus::bad_signature:
      return "bad signature";
    case VerifyStatus::digest_mismatch:
      return "digest mismatch";
  }
  return "?";
}

Verification verify_manifest(std::string_view manifest_bytes, const std::optional<std::string>& signature_text,
                             const TrustedKeys& trusted) {
  if (!signature_text) return {VerifyStatus::not_signed, "", "the manifest has no signature"};
  auto doc = parse_signature(*signature_text);
  if (!doc) return {VerifyStatus::bad_signature, "", doc.error().message};
  const digest::Digest digest = digest::sha256(manifest_bytes);
  if (digest != doc->signed_digest)
    return {VerifyStatus::digest_mismatch, doc->key_id,
            "the signature covers " + doc->signed_digest.to_string() + ", the manifest is " + digest.to_string()};
  const auto key = trusted.find(doc->key_id);
  if (key == trusted.end())
    return {VerifyStatus::unknown_key, doc->key_id,
            "signed by key " + doc->key_id + ", which is not trusted (orchestrate key trust FILE)"};
  if (!key->second.verify(manifest_bytes, doc->signature))
    return {VerifyStatus::bad_signature, doc->key_id, "the signature by key " + doc->key_id + " does not verify"};
  return {VerifyStatus::verified, doc->key_id, "signed by trusted key " + doc->key_id};
}

}  // namespace orc::cache
