// The `remote:` and `trusted_keys:` keys: accepted shapes, paths resolved
// against the configuration file, and errors at FILE:LINE:COL that never
// echo a URL (it may carry a password).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/recipe/test_support.hpp"

namespace orc::recipe {
namespace {

using testing::error_headlines;
using testing::parse_ok;
using Lines = std::vector<std::string>;

constexpr const char* k_tiers = R"(tiers:
  t:
    gpus: ["H100"]
)";

TEST(RecipeRemote, RemoteAndTrustedKeysAreRead) {
  const std::string text = std::string(k_tiers) + R"(remote: http://u:pw@127.0.0.1:5000/team/artifacts
trusted_keys:
  - keys/ci.pub.pem
  - /etc/orchestrate/other.pem
  - |
    -----BEGIN PUBLIC KEY-----
    MCowBQYDK2VwAyEA
    -----END PUBLIC KEY-----
)";
  const Config config = parse_ok(text, "/srv/conf/orchestrate.yaml");
  EXPECT_EQ(config.remote, "http://u:pw@127.0.0.1:5000/team/artifacts");
  EXPECT_EQ(config.remote_where.line, 4);
  EXPECT_EQ(config.remote_where.col, 9);
  ASSERT_EQ(config.trusted_keys.size(), 3u);
  EXPECT_EQ(config.trusted_keys[0], "/srv/conf/keys/ci.pub.pem");
  EXPECT_EQ(config.trusted_keys[1], "/etc/orchestrate/other.pem");
  EXPECT_TRUE(config.trusted_keys[2].starts_with("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n"));
}

TEST(RecipeRemote, BothKeysAreOptional) {
  const Config config = parse_ok(k_tiers);
  EXPECT_EQ(config.remote, "");
  EXPECT_TRUE(config.trusted_keys.empty());
}

TEST(RecipeRemote, BadRemotesAreReportedWithoutTheUrl) {
  EXPECT_EQ(error_headlines(std::string(k_tiers) + "remote: ftp://u:secret@host/repo\n"),
            Lines{"orchestrate: error: t.yaml:4:9: invalid 'remote': expected an http:// or https:// URL"});
  EXPECT_EQ(error_headlines(std::string(k_tiers) + "remote: http://u:secret@host:5000\n"),
            Lines{"orchestrate: error: t.yaml:4:9: invalid 'remote': the URL names no repository (like "
                  "http://HOST:5000/team/artifacts)"});
  EXPECT_EQ(error_headlines(std::string(k_tiers) + "remote: [a]\n"),
            Lines{"orchestrate: error: t.yaml:4:9: expected a string for 'remote', got a list"});
}

TEST(RecipeRemote, TrustedKeysMustBeAListOfStrings) {
  EXPECT_EQ(error_headlines(std::string(k_tiers) + "trusted_keys: keys/ci.pem\n"),
            Lines{"orchestrate: error: t.yaml:4:15: expected a list of PEM files or inline PEM for 'trusted_keys', "
                  "got a string"});
  EXPECT_EQ(error_headlines(std::string(k_tiers) + "trusted_keys: [\"\"]\n"),
            Lines{"orchestrate: error: t.yaml:4:16: empty entry in 'trusted_keys'"});
}

TEST(RecipeRemote, MisspelledKeysSuggestTheNewOnes) {
  EXPECT_EQ(error_headlines(std::string(k_tiers) + "remot: http://h/r\ntrusted_key: []\n"),
            (Lines{"orchestrate: error: t.yaml:4:1: unknown key 'remot' (did you mean 'remote'?)",
                   "orchestrate: error: t.yaml:5:1: unknown key 'trusted_key' (did you mean 'trusted_keys'?)"}));
}

}  // namespace
}  // namespace orc::recipe
