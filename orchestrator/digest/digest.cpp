#include "orchestrator/digest/digest.hpp"

#include <algorithm>
#include <cstring>

namespace orc::digest {

namespace {

constexpr std::string_view k_prefix = "sha256:";
constexpr std::size_t k_hex_digits = 2 * Digest::k_size;

// The input as an error message quotes it: at most 80 characters.
std::string quoted(std::string_view text) {
  return "'" + std::string(text.substr(0, 80)) + (text.size() > 80 ? "...'" : "'");
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Reads 64 lowercase hex digits; `shown` is what the error quotes.
std::expected<Digest, std::string> read_hex(std::string_view hex, std::string_view shown) {
  if (hex.size() != k_hex_digits)
    return std::unexpected("digest " + quoted(shown) + " has " + std::to_string(hex.size()) +
                           " hex digits; sha256 needs 64");
  Digest::Raw raw{};
  for (std::size_t i = 0; i < hex.size(); ++i) {
    const int v = hex_value(hex[i]);
    if (v < 0) {
      const bool upper = hex[i] >= 'A' && hex[i] <= 'F';
      return std::unexpected("digest " + quoted(shown) + " has " +
                             (upper ? "an uppercase hex digit" : "a character that is not a hex digit") +
                             " at position " + std::to_string(i + 1) + " of its 64 (digests are lowercase hex)");
    }
    raw[i / 2] = static_cast<std::byte>(i % 2 == 0 ? v << 4 : std::to_integer<int>(raw[i / 2]) | v);
  }
  return Digest(raw);
}

}  // namespace

std::string_view to_string(Algorithm) { return "sha256"; }

std::expected<Digest, std::string> Digest::parse(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return std::unexpected("not a digest: " + quoted(text) + " (expected sha256:<64 lowercase hex digits>)");
  if (text.substr(0, colon + 1) != k_prefix)
    return std::unexpected("digest " + quoted(text) + " uses algorithm " + quoted(text.substr(0, colon)) +
                           "; only sha256 is supported");
  return read_hex(text.substr(colon + 1), text);
}

std::expected<Digest, std::string> Digest::from_hex(std::string_view hex) { return read_hex(hex, hex); }

std::string Digest::hex() const {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out(k_hex_digits, '0');
  for (std::size_t i = 0; i < k_size; ++i) {
    const auto b = std::to_integer<unsigned>(m_bytes[i]);
    out[2 * i] = k_digits[b >> 4];
    out[2 * i + 1] = k_digits[b & 0xf];
  }
  return out;
}

std::string Digest::to_string() const { return std::string(k_prefix) + hex(); }

std::expected<DigestPrefix, std::string> DigestPrefix::parse(std::string_view text) {
  // Hex in either case, as the index always took it.
  std::string lower(text);
  for (char& c : lower)
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  const auto colon = lower.find(':');
  const std::string_view hex = std::string_view(lower).substr(colon == std::string::npos ? 0 : colon + 1);
  // A whole digest, or one of another algorithm: Digest's parse says what is wrong.
  if ((colon != std::string::npos && lower.substr(0, colon + 1) != k_prefix) || hex.size() >= k_hex_digits) {
    auto whole = colon == std::string::npos ? Digest::from_hex(lower) : Digest::parse(lower);
    if (!whole) return std::unexpected(whole.error());
    return DigestPrefix(whole->hex());
  }
  if (hex.size() < k_min_digits || std::ranges::any_of(hex, [](char c) { return hex_value(c) < 0; }))
    return std::unexpected(quoted(text) + " is not a sha256 digest or a prefix of one (" +
                           std::to_string(k_min_digits) + " to 64 hex digits, sha256: optional)");
  return DigestPrefix(std::string(hex));
}

std::string DigestPrefix::to_string() const { return std::string(k_prefix) + m_hex; }

std::string Digest::short_string(std::size_t hex_digits) const {
  return std::string(k_prefix) + hex().substr(0, hex_digits);
}

}  // namespace orc::digest

std::size_t std::hash<orc::digest::Digest>::operator()(const orc::digest::Digest& d) const noexcept {
  // The bytes are a cryptographic hash already: any eight of them are uniform.
  std::size_t out = 0;
  std::memcpy(&out, d.bytes().data(), sizeof out);
  return out;
}
