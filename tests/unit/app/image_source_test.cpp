// Issue 28: an image reference with credentials (oci://USER:PASSWORD@HOST/...)
// sends them and prints them nowhere: ImageSource::given, the one form every
// message and report prints, is the reference without them; the host (and
// so the plain-HTTP rule for loopback) is read after the userinfo.
#include <gtest/gtest.h>

#include "orchestrator/app/inspect/image_scan.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {
namespace {

const std::string k_digest = "sha256:" + std::string(64, 'a');

struct Case {
  std::string arg, given, registry, reference;
};

TEST(ImageSource, CredentialsGoToTheClientAndNotIntoTheShownForm) {
  const Case cases[] = {
      // Loopback after the userinfo: plain HTTP.
      {"oci://user:Pw-9f3kQz@127.0.0.1:5000/team/cuda:12.4", "oci://127.0.0.1:5000/team/cuda:12.4",
       "http://user:Pw-9f3kQz@127.0.0.1:5000/team/cuda", "12.4"},
      {"oci://user:Pw-9f3kQz@registry.example:443/team/cuda@" + k_digest,
       "oci://registry.example:443/team/cuda@" + k_digest, "https://user:Pw-9f3kQz@registry.example:443/team/cuda",
       k_digest},
      // A password holding '@' ends at the authority's last one, as the
      // registry client reads its URL.
      {"oci+http://u:p@ss@host:5000/r", "oci+http://host:5000/r", "http://u:p@ss@host:5000/r", "latest"},
      {"oci://localhost:5000/r:t", "oci://localhost:5000/r:t", "http://localhost:5000/r", "t"},
  };
  for (const auto& c : cases) {
    const auto s = parse_image_source(c.arg);
    ASSERT_TRUE(s) << c.arg;
    EXPECT_EQ(s->kind, ImageSourceKind::registry);
    EXPECT_EQ(s->given, c.given);
    EXPECT_EQ(s->registry, c.registry);
    EXPECT_EQ(s->reference, c.reference);
  }
}

// The message of a reference that does not parse quotes it redacted, not
// counting on the printer to.
TEST(ImageSource, MalformedReferencesAreRefusedWithoutTheirPassword) {
  for (const std::string bad : {"oci://u:Pw-9f3kQz@/r:t", "oci://u:Pw-9f3kQz@h/R:t", "oci://u:Pw-9f3kQz@h/r@md5:00",
                                "docker://u:Pw-9f3kQz@host/repo:tag"}) {
    try {
      (void)parse_image_source(bad);
      ADD_FAILURE() << bad << " parsed";
    } catch (const util::Failure& f) {
      EXPECT_EQ(f.code(), util::ExitCode::bad_input) << bad;
      // The message itself, before the printer's redaction.
      ASSERT_EQ(f.diagnostics().size(), 1u);
      EXPECT_EQ(f.diagnostics()[0].message.find("Pw-9f3kQz"), std::string::npos) << f.diagnostics()[0].message;
    }
  }
  // A docker reference's '@' is its digest's.
  const auto s = parse_image_source("docker://cov@" + k_digest);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->given, "docker://cov@" + k_digest);
}

}  // namespace
}  // namespace orc::app
