#include "orchestrator/util/escape.hpp"

#include <cstddef>

namespace orc::util {

namespace {

unsigned char byte_at(std::string_view s, std::size_t i) { return static_cast<unsigned char>(s[i]); }

// The length of the well-formed UTF-8 sequence starting at s[i], or 0 when
// none starts there (the Unicode standard's table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const unsigned char lead = byte_at(s, i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  if (byte_at(s, i + 1) < low || byte_at(s, i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k)
    if (byte_at(s, i + k) < 0x80 || byte_at(s, i + k) > 0xbf) return 0;
  return length;
}

// C0 and DEL as one byte; C1 (U+0080..U+009F) as its two bytes c2 80..c2 9f.
bool is_control(std::string_view s, std::size_t i, std::size_t length) {
  if (length == 1) return byte_at(s, i) < 0x20 || byte_at(s, i) == 0x7f;
  return length == 2 && byte_at(s, i) == 0xc2 && byte_at(s, i + 1) <= 0x9f;
}

void append_escaped(std::string& out, unsigned char c) {
  static constexpr char k_hex[] = "0123456789abcdef";
  out += "\\x";
  out += k_hex[c >> 4];
  out += k_hex[c & 0xf];
}

enum class Controls { keep, escape };

std::string escaped(std::string_view bytes, Controls controls) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t length = utf8_length(bytes, i);
    if (length == 0) {
      append_escaped(out, byte_at(bytes, i++));
      continue;
    }
    if (controls == Controls::escape && is_control(bytes, i, length)) {
      for (std::size_t k = 0; k < length; ++k) append_escaped(out, byte_at(bytes, i + k));
    } else {
      out.append(bytes.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace

std::string utf8_escaped(std::string_view bytes) { return escaped(bytes, Controls::keep); }

std::string printable(std::string_view bytes) { return escaped(bytes, Controls::escape); }

}  // namespace orc::util
