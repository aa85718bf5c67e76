#pragma once
// Names are bytes. A file name or an archive member may hold any byte but
// NUL ('/' too, inside a package), so a crafted one can carry bytes that are
// not UTF-8 (which JSON cannot hold) or a terminal's control sequences (ESC
// [2J clears the screen it is printed on). Every name a command prints goes
// through one of these two, which share one scheme: a byte that may not be
// written as it is becomes the four characters \xNN (two lower-case hex
// digits), and everything else is left as it was.
#include <string>
#include <string_view>

namespace orc::util {

// For JSON strings: valid UTF-8 passes unchanged (the JSON writer escapes
// control characters itself); each byte that is not part of a valid UTF-8
// sequence becomes \xNN, so "lib\xff.so" names the file lib<0xff>.so.
std::string utf8_escaped(std::string_view bytes);

// For text meant for a terminal: as utf8_escaped, and the control
// characters too (C0 with tab and newline, DEL, and the C1 range
// U+0080..U+009F, whose two UTF-8 bytes become \xc2\xNN), so no name can
// move the cursor, recolour the screen or start a new line of output.
std::string printable(std::string_view bytes);

}  // namespace orc::util
