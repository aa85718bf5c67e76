#include "orchestrator/inspect/sha256.hpp"

#include <openssl/evp.h>

#include <algorithm>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::inspect {

namespace {

// OpenSSL failing to hash is a broken installation, not bad input.
[[noreturn]] void openssl_failed(const char* what) {
  throw util::Failure(util::ExitCode::outside_failure, std::string("OpenSSL SHA-256 failed in ") + what);
}

struct CtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

// EVP_DigestUpdate takes size_t, but chunking keeps each call bounded and
// makes the loop identical on 32-bit hosts.
constexpr std::size_t k_chunk = std::size_t{1} << 30;

}  // namespace

struct Sha256::Context {
  std::unique_ptr<EVP_MD_CTX, CtxDeleter> ctx{EVP_MD_CTX_new()};
  bool started = false;

  void start() {
    if (!ctx) openssl_failed("EVP_MD_CTX_new");
    if (EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) openssl_failed("EVP_DigestInit_ex");
    started = true;
  }
};

Sha256::Sha256() : m_context(std::make_unique<Context>()) { m_context->start(); }
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(Bytes data) {
  if (!m_context->started) m_context->start();
  while (!data.empty()) {
    const std::size_t n = std::min(data.size(), k_chunk);
    if (EVP_DigestUpdate(m_context->ctx.get(), data.data(), n) != 1) openssl_failed("EVP_DigestUpdate");
    data = data.subspan(n);
  }
}

std::string Sha256::hex_digest() {
  if (!m_context->started) m_context->start();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(m_context->ctx.get(), digest, &length) != 1) openssl_failed("EVP_DigestFinal_ex");
  m_context->started = false;
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out += k_hex[digest[i] >> 4];
    out += k_hex[digest[i] & 0xf];
  }
  return out;
}

std::string sha256_hex(Bytes data) {
  Sha256 hasher;
  hasher.update(data);
  return hasher.hex_digest();
}

}  // namespace orc::inspect
