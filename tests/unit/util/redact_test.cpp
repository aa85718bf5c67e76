// Credentials in URLs, found in any text (a line that never parsed, a
// message, several URLs at once) and hidden as "***", with the caret of an
// excerpt still under the character it pointed at.
#include "orchestrator/util/redact.hpp"

#include <gtest/gtest.h>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::util {
namespace {

struct Case {
  const char* text;
  const char* shown;
};

// Well-formed URLs, then lines that are no URL at all: unterminated quotes,
// flow lists and maps, passwords holding '@' or '/', URLs run together.
constexpr Case k_cases[] = {
    {"ftp://u:PW@127.0.0.1:1/r", "ftp://***@127.0.0.1:1/r"},
    {"http://TOKEN@host/r", "http://***@host/r"},
    {"remote: \"https://ci:s3cret@reg:5000/team/a\"", "remote: \"https://***@reg:5000/team/a\""},
    {"remote: \"ftp://u:PW@h:1/r", "remote: \"ftp://***@h:1/r"},
    {"remote: [ftp://u:PW@h/r, http://v:QQ@g/s]", "remote: [ftp://***@h/r, http://***@g/s]"},
    {"remote: {url: 'http://u:PW@h/r'}", "remote: {url: 'http://***@h/r'}"},
    {"x: http://u:p@ss@host/r", "x: http://***@host/r"},
    {"x: http://u:pa/ss@host/r", "x: http://***@host/r"},
    {"[http://a/b,http://u:PW@c/d]", "[http://a/b,http://***@c/d]"},
    // An image reference's digest follows an '@' that ends no userinfo.
    {"oci://u:PW@h:5000/r@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef: gone",
     "oci://***@h:5000/r@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef: gone"},
    {"oci://u:p@ss@h/r@sha512:0123456789abcdef0123456789abcdef",
     "oci://***@h/r@sha512:0123456789abcdef0123456789abcdef"},
    {"x: http://u:PW@sha256:beef@h/r", "x: http://***@h/r"},
    // Nothing to hide.
    {"", ""},
    {"plain words", "plain words"},
    {"http://host/r", "http://host/r"},
    {"http://@host/r", "http://@host/r"},
    {"user@host", "user@host"},
    {"://", "://"},
    {"a@b://c", "a@b://c"},
    {"oci://127.0.0.1:5000/cov/img@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
     "oci://127.0.0.1:5000/cov/img@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
    {"docker://cov@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef: no such image",
     "docker://cov@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef: no such image"},
};

TEST(Redact, UserinfoBecomesStarsWhereverItIsWritten) {
  for (const Case& c : k_cases) EXPECT_EQ(redact_credentials(c.text), c.shown) << c.text;
}

TEST(Redact, OffsetsFollowTheRedaction) {
  const std::string line = "remote: ftp://user:password@h/r # x";
  const std::string shown = redact_credentials(line);
  ASSERT_EQ(shown, "remote: ftp://***@h/r # x");
  EXPECT_EQ(redacted_offset(line, 0), 0u);
  EXPECT_EQ(redacted_offset(line, 8), 8u);                   // the 'f' of ftp
  EXPECT_EQ(redacted_offset(line, line.find("user")), 14u);  // into the stars
  EXPECT_EQ(redacted_offset(line, line.find("word")), 14u);
  EXPECT_EQ(redacted_offset(line, line.find('@')), shown.find('@'));
  EXPECT_EQ(redacted_offset(line, line.find('#')), shown.find('#'));
  EXPECT_EQ(redacted_offset(line, line.size()), shown.size());
}

TEST(Redact, DiagnosticsRedactHeadlineAndExcerpt) {
  const Diagnostic d{.where = {"o.yaml", 4, 30},
                     .message = "unknown GPU 'http://u:PW@h/r'",
                     .source_line = "remote: \"ftp://u:PW@h/r  junk: x"};
  EXPECT_EQ(d.render(),
            "orchestrate: error: o.yaml:4:30: unknown GPU 'http://***@h/r'\n"
            "    remote: \"ftp://***@h/r  junk: x\n" +
                // Column 30 is the ':' of "junk:", one to the left once "u:PW" is "***".
                std::string(4 + 28, ' ') + "^\n");
  const Failure f(ExitCode::bad_input, "bad registry URL 'ftp://u:PW@h/r'");
  EXPECT_EQ(std::string(f.what()), "orchestrate: error: bad registry URL 'ftp://***@h/r'");
}

}  // namespace
}  // namespace orc::util
