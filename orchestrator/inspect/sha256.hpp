#pragma once
// SHA-256 for artifact digests. OpenSSL's EVP interface does the work (it
// picks the SHA-NI / AVX2 code path of the CPU); this header keeps OpenSSL's
// types out of every includer.
#include <memory>
#include <string>

#include "orchestrator/inspect/bytes.hpp"

namespace orc::inspect {

// Incremental hasher: update() any number of times, then hex_digest() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(Bytes data);
  // The digest in lower-case hex (64 characters). Finishes the hash: a later
  // update() starts a new one.
  std::string hex_digest();

 private:
  struct Context;
  std::unique_ptr<Context> m_context;
};

// One-shot: the lower-case hex SHA-256 of `data`.
std::string sha256_hex(Bytes data);

}  // namespace orc::inspect
