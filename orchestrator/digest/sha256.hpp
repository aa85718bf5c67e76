#pragma once
// SHA-256, streaming and in one shot, yielding a Digest. OpenSSL's EVP
// interface does the work (it picks the SHA-NI / AVX2 code path of the CPU);
// this header keeps OpenSSL's types out of every includer.
#include <cstddef>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "orchestrator/digest/digest.hpp"

namespace orc::digest {

using Bytes = std::span<const std::byte>;

// Incremental hasher: update() any number of times, then digest() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(Bytes data);
  void update(std::string_view text) { update(std::as_bytes(std::span(text.data(), text.size()))); }
  // Finishes the hash: a later update() starts a new one.
  Digest digest();
  // Starts over without finishing (a transfer that restarts from byte 0).
  void reset();

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
  void update(std::string_view text) { update(std::as_bytes(std::span(text.data(), text.size()))); }
  // Waits for every byte given so far, then as Sha256::digest(): the next
  // update() starts a new hash.
  Digest digest();
  void reset();

 private:
  struct State;
  std::unique_ptr<State> m_state;
};

// One shot.
Digest sha256(Bytes data);
Digest sha256(std::string_view text);

// Feeds a whole file to `hasher` (so a caller can continue hashing after it,
// as a resumed download does) and returns its size; the error is
// "cannot read PATH: REASON".
std::expected<std::uint64_t, std::string> hash_file(const std::filesystem::path& path, Sha256& hasher);
std::expected<std::uint64_t, std::string> hash_file(const std::filesystem::path& path, BackgroundSha256& hasher);

}  // namespace orc::digest
