// The one scheme names are printed with: bytes that are not UTF-8 (JSON) and
// control characters (terminals) become \xNN; everything else is untouched.
#include "orchestrator/util/escape.hpp"

#include <gtest/gtest.h>

#include <string>

namespace orc::util {
namespace {

TEST(Escape, ValidUtf8PassesUnchanged) {
  for (const std::string name : {"libk.so", "torch/lib/libtorch_cuda.so", "caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac.so",
                                 "\xf0\x9f\x98\x80.bin", "a\\xff.so", ""}) {
    EXPECT_EQ(utf8_escaped(name), name);
    EXPECT_EQ(printable(name), name);
  }
}

TEST(Escape, BytesThatAreNotUtf8BecomeHexEscapes) {
  EXPECT_EQ(utf8_escaped("bad\xff.so"), "bad\\xff.so");
  EXPECT_EQ(utf8_escaped("\x80"), "\\x80");                             // a lone continuation byte
  EXPECT_EQ(utf8_escaped("\xc3"), "\\xc3");                             // cut short at the end
  EXPECT_EQ(utf8_escaped("\xc3x"), "\\xc3x");                           // cut short by an ASCII byte
  EXPECT_EQ(utf8_escaped("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(utf8_escaped("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong, three bytes
  EXPECT_EQ(utf8_escaped("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(utf8_escaped("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(utf8_escaped("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80");
  // A valid character right after an invalid byte is kept whole.
  EXPECT_EQ(utf8_escaped("\xff\xc3\xa9"), "\\xff\xc3\xa9");
}

TEST(Escape, JsonKeepsControlCharactersForTheJsonWriter) {
  EXPECT_EQ(utf8_escaped("esc\x1b[2Jx.so"), "esc\x1b[2Jx.so");
  EXPECT_EQ(utf8_escaped("a\nb"), "a\nb");
}

TEST(Escape, PrintableEscapesEveryControlCharacter) {
  EXPECT_EQ(printable("esc\x1b[2Jx.so"), "esc\\x1b[2Jx.so");
  EXPECT_EQ(printable("a\nb\tc\rd"), "a\\x0ab\\x09c\\x0dd");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("csi\xc2\x9b"
                      "2J"),
            "csi\\xc2\\x9b2J");                          // C1 CSI, which some terminals obey
  EXPECT_EQ(printable("nbsp\xc2\xa0"), "nbsp\xc2\xa0");  // U+00A0 is printable
  EXPECT_EQ(printable("bad\xff\x1b"), "bad\\xff\\x1b");
}

}  // namespace
}  // namespace orc::util
