#include "orchestrator/registry/protocol.hpp"

#include <gtest/gtest.h>

namespace orc::registry {
namespace {

TEST(Remote, SplitsOriginRepositoryAndCredentials) {
  auto r = parse_remote("http://127.0.0.1:5000/team/artifacts");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->origin, "http://127.0.0.1:5000");
  EXPECT_EQ(r->repository, "team/artifacts");
  EXPECT_FALSE(r->credentials);

  r = parse_remote("https://ci%40corp:p%3Ass@reg.example/a/b/c/");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->origin, "https://reg.example");
  EXPECT_EQ(r->repository, "a/b/c");
  ASSERT_TRUE(r->credentials);
  EXPECT_EQ(r->credentials->username, "ci@corp");
  EXPECT_EQ(r->credentials->password, "p:ss");
}

TEST(Remote, RejectsWithoutEchoingThePassword) {
  for (const char* url :
       {"127.0.0.1:5000/x", "ftp://h/x", "http://h", "http://h/", "http://u:secret@h/Upper", "http://h/a//b",
        "http://h/x?y=1", "http://u:se#cret@h/x", "http://u?x:secret@h/x", "http://u:secret@h?q/x"}) {
    const auto r = parse_remote(url);
    ASSERT_FALSE(r) << url;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid);
    EXPECT_EQ(r.error().message.find("secret"), std::string::npos) << r.error().message;
  }
}

TEST(Pagination, NextLink) {
  EXPECT_EQ(next_link(R"(</v2/x/tags/list?last=b&n=2>; rel="next")"), "/v2/x/tags/list?last=b&n=2");
  EXPECT_EQ(next_link(R"(<https://h/prev>; rel="prev", <https://h/next>; rel=next)"), "https://h/next");
  EXPECT_EQ(next_link(R"(</v2/x/tags/list?last=b>; rel="prev")"), std::nullopt);
  EXPECT_EQ(next_link("garbage"), std::nullopt);
  EXPECT_EQ(next_link("<unterminated; rel=next"), std::nullopt);
}

TEST(Pagination, ResolveUrl) {
  EXPECT_EQ(resolve_url("http://h:1", "/v2/x/blobs/uploads/u?_state=s"), "http://h:1/v2/x/blobs/uploads/u?_state=s");
  EXPECT_EQ(resolve_url("http://h:1", "https://other/v2/x"), "https://other/v2/x");
  EXPECT_EQ(resolve_url("http://h:1", "relative"), std::nullopt);
  EXPECT_EQ(resolve_url("http://h:1", "//evil/x"), std::nullopt);
  EXPECT_EQ(resolve_url("http://h:1", ""), std::nullopt);
}

TEST(Resume, ContentRange) {
  auto r = parse_content_range("bytes 100-199/1000");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 100u);
  EXPECT_EQ(r->last, 199u);
  EXPECT_EQ(r->total, 1000u);
  r = parse_content_range("bytes 5-9/*");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->total);
  for (const char* bad : {"", "bytes", "bytes 9-5/10", "bytes 0-9/9", "items 0-1/2", "bytes a-b/c", "bytes 0-1"})
    EXPECT_FALSE(parse_content_range(bad)) << bad;
}

TEST(Resume, Decisions) {
  EXPECT_EQ(resume_action(0, 200, std::nullopt), ResumeAction::restart);
  // The server ignored Range and sends the whole blob: start over cleanly.
  EXPECT_EQ(resume_action(500, 200, std::nullopt), ResumeAction::restart);
  EXPECT_EQ(resume_action(500, 206, "bytes 500-999/1000"), ResumeAction::append);
  EXPECT_EQ(resume_action(500, 206, "bytes 400-999/1000"), ResumeAction::fail);
  EXPECT_EQ(resume_action(500, 206, std::nullopt), ResumeAction::fail);
  EXPECT_EQ(resume_action(500, 204, std::nullopt), ResumeAction::fail);
}

TEST(Errors, RegistryErrorJson) {
  auto e = parse_registry_errors(
      R"({"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry","detail":"sha256:ab"},{"code":"X"}]})");
  EXPECT_EQ(e.first_code, "BLOB_UNKNOWN");
  EXPECT_EQ(e.text, "BLOB_UNKNOWN: blob unknown to registry; X");
  EXPECT_EQ(parse_registry_errors("404 page not found\n").text, "");
  EXPECT_EQ(parse_registry_errors(R"({"errors":"nope"})").text, "");
  EXPECT_EQ(parse_registry_errors(R"({"errors":[1,{"code":7}]})").text, "");
}

}  // namespace
}  // namespace orc::registry
