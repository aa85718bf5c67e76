#pragma once
// Credentials written into URLs (scheme://user:password@host/...) never reach
// a terminal, a log or a JSON document. These find them in any text, not only
// in text that parsed as a URL: a line of a broken configuration file quoted
// under a caret is redacted as well as a message naming a remote.
//
// The rule, for text that may be anything: after each "://", the word runs to
// the next blank (space, tab, line break) or the next "://"; everything from
// the "://" to the word's last '@' is userinfo, and is shown as "***". So
// "remote: \"ftp://u:PW@127.0.0.1:1/r" becomes "remote: \"ftp://***@127.0.0.1:1/r".
// An '@' that starts a digest (oci://HOST/REPO@sha256:HEX) ends no userinfo:
// the last '@' before it does, if there is one.
// A password holding a blank is not a URL any tool accepts; it is not found.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace orc::util {

inline constexpr std::string_view k_redacted = "***";

// A byte range [begin, end) of text.
struct TextSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// The userinfo of every URL in `text`, in order, none empty.
std::vector<TextSpan> credential_spans(std::string_view text);

// `text` with each credential span replaced by k_redacted.
std::string redact_credentials(std::string_view text);

// Where byte `offset` of `text` lands in redact_credentials(text): shifted by
// the spans before it; an offset inside a span lands on its "***".
std::size_t redacted_offset(std::string_view text, std::size_t offset);

}  // namespace orc::util
