#pragma once
// SHA-256 digests as the distribution spec writes them ("sha256:<64 hex>"),
// over inspect::Sha256 (OpenSSL EVP; the layer below this module).
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "orchestrator/registry/error.hpp"

namespace orc::registry {

// Incremental hasher: update() any number of times, then digest() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  // "sha256:<hex>". Finishes the hash; the hasher starts over afterwards.
  std::string digest();
  // Starts over without finishing (a transfer that restarts from byte 0).
  void reset();

 private:
  struct Context;
  std::unique_ptr<Context> m_context;
};

// inspect::BackgroundSha256 (hashing on its own thread, so a download's
// hashing overlaps receiving and writing) in the "sha256:" form.
class BackgroundSha256 {
 public:
  BackgroundSha256();
  ~BackgroundSha256();
  BackgroundSha256(const BackgroundSha256&) = delete;
  BackgroundSha256& operator=(const BackgroundSha256&) = delete;

  void update(std::string_view bytes);
  // Waits for every byte given so far, then as Sha256::digest().
  std::string digest();
  void reset();

 private:
  struct State;
  std::unique_ptr<State> m_state;
};

// "sha256:<hex>" of `bytes`.
std::string sha256_digest(std::string_view bytes);

// Feeds a whole file to `hasher` (so a caller can continue hashing after it,
// as a resumed download does) and returns its size.
std::expected<std::uint64_t, Error> hash_file(const std::filesystem::path& path, Sha256& hasher);
std::expected<std::uint64_t, Error> hash_file(const std::filesystem::path& path, BackgroundSha256& hasher);

// Whether `digest` is "sha256:" and 64 lower-case hex digits: the only form
// this client sends or accepts (it also keeps a digest safe in a URL path).
bool is_sha256_digest(std::string_view digest);

// The hex part of a valid digest ("sha256:ab.." -> "ab..").
std::string_view digest_hex(std::string_view digest);

}  // namespace orc::registry
