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

// A Sha256 that hashes on its own thread, so hashing a stream overlaps
// receiving and writing it instead of adding to them (hashing 1 GiB costs
// ~0.6 s here). update() copies the bytes into 4 MiB blocks and returns at
// once unless four blocks wait for the thread.
class BackgroundSha256 {
 public:
  BackgroundSha256();
  ~BackgroundSha256();
  BackgroundSha256(const BackgroundSha256&) = delete;
  BackgroundSha256& operator=(const BackgroundSha256&) = delete;

  void update(Bytes data);
  // Waits for every byte given so far, then as Sha256::hex_digest(): the
  // next update() starts a new hash.
  std::string hex_digest();
  // Starts over without finishing (a transfer that restarts from byte 0).
  void reset();

 private:
  struct State;
  std::unique_ptr<State> m_state;
};

// One-shot: the lower-case hex SHA-256 of `data`.
std::string sha256_hex(Bytes data);

}  // namespace orc::inspect
