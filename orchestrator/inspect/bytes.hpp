#pragma once
// Checked reads over untrusted bytes. Every parser in this module reads only
// through these: offsets that came from a file are never used for raw pointer
// arithmetic, sums are overflow-checked, and multi-byte values are read
// little-endian with memcpy (containers need not be aligned in the file).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace orc::inspect {

using Bytes = std::span<const std::byte>;

// a + b, or nullopt on overflow.
inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The `size` bytes at `offset`, or nullopt when any of them lies outside.
inline std::optional<Bytes> sub(Bytes data, std::uint64_t offset, std::uint64_t size) {
  const auto end = checked_add(offset, size);
  if (!end || *end > data.size()) return std::nullopt;
  return data.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(size));
}

// A little-endian integer at `offset`, or nullopt when it does not fit.
template <typename T>
requires std::is_integral_v<T> std::optional<T> read_le(Bytes data, std::uint64_t offset) {
  const auto bytes = sub(data, offset, sizeof(T));
  if (!bytes) return std::nullopt;
  T value;
  std::memcpy(&value, bytes->data(), sizeof(T));
  if constexpr (std::endian::native == std::endian::big) value = std::byteswap(value);
  return value;
}

inline Bytes as_bytes(std::string_view s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); }

inline std::string_view as_text(Bytes b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

}  // namespace orc::inspect
