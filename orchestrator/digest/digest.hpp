#pragma once
// A content digest as a value: the algorithm and its raw bytes. The text
// form "sha256:<64 lowercase hex>" exists only on the wire (registries,
// manifests, JSON) and in print; everything between parses once and then
// compares, hashes and stores the value (REAPI's Digest).
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace orc::digest {

enum class Algorithm : std::uint8_t { sha256 };

class Digest {
 public:
  static constexpr std::size_t k_size = 32;  // bytes of a SHA-256
  using Raw = std::array<std::byte, k_size>;

  Digest() = default;  // the all-zero sha256, a placeholder that no content has
  explicit Digest(const Raw& bytes, Algorithm algorithm = Algorithm::sha256) : m_algorithm(algorithm), m_bytes(bytes) {}

  // "sha256:<64 lowercase hex digits>", the only form accepted; the error
  // says what is wrong (the algorithm, the length, a digit) and shows the
  // input (at most 80 characters of it).
  static std::expected<Digest, std::string> parse(std::string_view text);
  // The 64 lowercase hex digits alone, as a blob's file name or an index row
  // holds them; errors as parse().
  static std::expected<Digest, std::string> from_hex(std::string_view hex);

  Algorithm algorithm() const { return m_algorithm; }
  std::span<const std::byte, k_size> bytes() const { return m_bytes; }
  // The 64 lowercase hex digits.
  std::string hex() const;
  // "sha256:<hex>", for the wire and for print.
  std::string to_string() const;
  // "sha256:" and the first `hex_digits` of the hex: the short form tables
  // and messages name a digest by.
  std::string short_string(std::size_t hex_digits) const;

  friend auto operator<=>(const Digest&, const Digest&) = default;
  friend bool operator==(const Digest&, const Digest&) = default;

 private:
  Algorithm m_algorithm = Algorithm::sha256;
  Raw m_bytes{};
};

// "sha256".
std::string_view to_string(Algorithm algorithm);

// How a user names a digest on the command line (`--digest`, `smoke
// --artifact`): all of it or its first hex digits, at least k_min_digits of
// them, "sha256:" optional. Parsed once where the argument enters.
class DigestPrefix {
 public:
  // Fewer hex digits than this match too much to be meant as one digest.
  static constexpr std::size_t k_min_digits = 4;

  // A whole digest (64 digits, or with an algorithm named) must be one that
  // Digest::parse accepts, and the error is its; a shorter one must be
  // k_min_digits to 64 lowercase hex digits.
  static std::expected<DigestPrefix, std::string> parse(std::string_view text);
  // All of `whole`.
  explicit DigestPrefix(const Digest& whole) : m_hex(whole.hex()) {}

  // The lowercase hex digits given.
  const std::string& hex() const { return m_hex; }
  bool matches(const Digest& digest) const { return digest.hex().starts_with(m_hex); }
  // "sha256:<the digits given>", for messages.
  std::string to_string() const;

 private:
  explicit DigestPrefix(std::string hex) : m_hex(std::move(hex)) {}
  std::string m_hex;
};

}  // namespace orc::digest

template <>
struct std::hash<orc::digest::Digest> {
  std::size_t operator()(const orc::digest::Digest& d) const noexcept;
};
