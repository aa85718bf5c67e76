// The Client against a scripted transport: what it sends (auth headers,
// Range, Content-Range, digests), how it reacts (retries, resumes, skips),
// and what it reports.
#include "orchestrator/registry/client.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "tests/unit/registry/test_support.hpp"

namespace orc::registry {
namespace {

using net::FileSlice;
using net::TransportErrorKind;
using testing::broken;
using testing::failure;

using std::chrono::milliseconds;
using testing::FakeTransport;
using testing::header_of;
using testing::Reply;

using testing::k_origin;

struct ClientFixture : testing::ScriptedClient {
  std::filesystem::path dir;

  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("orc-registry-unit-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  static std::string read(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void write(const std::filesystem::path& path, std::string_view bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
};

TEST_F(ClientFixture, BasicAuthAnswersTheChallengeAndNeverLogsThePassword) {
  auto client = make(std::string("http://ci:hunter2@reg.test:5000/team/art"));
  transport->push({.status = 401, .headers = {{"WWW-Authenticate", R"(Basic realm="basic-realm")"}}});
  transport->push({.status = 200});
  ASSERT_TRUE(client.ping());
  ASSERT_EQ(transport->requests().size(), 2u);
  EXPECT_EQ(transport->requests()[0].url, "http://reg.test:5000/v2/");
  EXPECT_EQ(header_of(transport->requests()[0], "Authorization"), "");
  EXPECT_EQ(header_of(transport->requests()[1], "Authorization"), basic_authorization({"ci", "hunter2"}));
  // Later requests send what worked without waiting for a challenge.
  transport->push({.status = 200});
  ASSERT_TRUE(client.ping());
  EXPECT_EQ(header_of(transport->requests()[2], "Authorization"), basic_authorization({"ci", "hunter2"}));
  EXPECT_NE(log.find("Authorization: <redacted>"), std::string::npos) << log;
  EXPECT_EQ(log.find("hunter2"), std::string::npos) << log;
  EXPECT_EQ(log.find(basic_authorization({"ci", "hunter2"}).substr(6)), std::string::npos) << log;
  EXPECT_EQ(client.display_url(), "http://reg.test:5000/team/art");
}

TEST_F(ClientFixture, RefusedCredentialsAreUnauthorizedNotALoop) {
  auto client = make(std::string(k_origin) + "/team/art", Credentials{"ci", "wrong"});
  const Reply refuse{.status = 401,
                     .headers = {{"WWW-Authenticate", R"(Basic realm="r")"}},
                     .chunks = {R"({"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]})"}};
  transport->push(refuse);
  transport->push(refuse);
  const auto result = client.ping();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::unauthorized);
  EXPECT_EQ(result.error().code, "UNAUTHORIZED");
  EXPECT_EQ(result.error().message,
            "GET http://reg.test:5000/v2/: registry API check: HTTP 401 (UNAUTHORIZED: authentication required); "
            "the registry refused the credentials");
  EXPECT_EQ(transport->requests().size(), 2u);
}

TEST_F(ClientFixture, AnonymousClientGetsUnauthorizedForBasicChallenge) {
  auto client = make();
  transport->push({.status = 401, .headers = {{"WWW-Authenticate", R"(Basic realm="r")"}}});
  const auto result = client.ping();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::unauthorized);
  EXPECT_NE(result.error().message.find("no credentials were given"), std::string::npos);
  EXPECT_EQ(transport->requests().size(), 1u);
}

TEST_F(ClientFixture, BearerTokenFlow) {
  auto client = make(std::string(k_origin) + "/team/art", Credentials{"ci", "pw"});
  transport->push({.status = 401,
                   .headers = {{"WWW-Authenticate", R"(Bearer realm="https://auth.test/token",service="reg.test",)"
                                                    R"(scope="repository:team/art:pull")"}}});
  transport->push({.status = 200, .chunks = {R"({"token":"tok-123","expires_in":60})"}});
  transport->push({.status = 200, .headers = {{"Content-Length", "42"}}});
  const auto size = client.blob_size(digest::sha256("x"));
  ASSERT_TRUE(size) << size.error().message;
  EXPECT_EQ(*size, 42u);
  ASSERT_EQ(transport->requests().size(), 3u);
  EXPECT_EQ(transport->requests()[1].url,
            "https://auth.test/token?service=reg.test&scope=repository%3Ateam%2Fart%3Apull");
  EXPECT_EQ(header_of(transport->requests()[1], "Authorization"), basic_authorization({"ci", "pw"}));
  EXPECT_EQ(header_of(transport->requests()[2], "Authorization"), "Bearer tok-123");
  EXPECT_EQ(log.find("tok-123"), std::string::npos) << log;
}

TEST_F(ClientFixture, PasswordNeverGoesToAPlainHttpRealmElsewhere) {
  auto client = make(std::string(k_origin) + "/team/art", Credentials{"ci", "pw"});
  transport->push({.status = 401, .headers = {{"WWW-Authenticate", R"(Bearer realm="http://evil.test/token")"}}});
  transport->push({.status = 200, .chunks = {R"({"token":"t"})"}});
  transport->push({.status = 200});
  ASSERT_TRUE(client.ping());
  EXPECT_EQ(header_of(transport->requests()[1], "Authorization"), "");
}

TEST_F(ClientFixture, RetriesServerErrorsWithBackoffAndRetryAfter) {
  auto client = make();
  transport->push({.status = 503});
  transport->push({.status = 429, .headers = {{"Retry-After", "1"}}});
  transport->push({.status = 200});
  ASSERT_TRUE(client.ping());
  EXPECT_EQ(sleeps, (std::vector<milliseconds>{milliseconds(100), milliseconds(1000)}));
}

TEST_F(ClientFixture, GivesUpAfterTheAttemptsAsServerOrUnreachable) {
  auto client = make();
  for (int i = 0; i < 3; ++i) transport->push({.status = 502});
  auto result = client.ping();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::server);
  EXPECT_EQ(result.error().status, 502);
  EXPECT_EQ(sleeps.size(), 2u);

  for (int i = 0; i < 3; ++i) transport->push({.error = failure(TransportErrorKind::connect)});
  result = client.ping();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::unreachable);
  EXPECT_EQ(result.error().message, "GET http://reg.test:5000/v2/: cannot reach the registry (scripted failure)");
  // TLS failures are not retried: the certificate will not change.
  const std::size_t before = transport->requests().size();
  transport->push({.error = failure(TransportErrorKind::tls)});
  result = client.ping();
  ASSERT_FALSE(result);
  EXPECT_EQ(transport->requests().size(), before + 1);
  EXPECT_NE(result.error().message.find("TLS verification failed"), std::string::npos);
}

TEST_F(ClientFixture, FetchResumesWithRangeAfterABrokenTransfer) {
  const std::string blob(10'000, 'b');
  const digest::Digest wanted = digest::sha256(blob);
  const std::string digest = wanted.to_string();
  auto client = make();
  transport->push(
      {.status = 200, .headers = {{"Content-Length", "10000"}}, .chunks = {blob.substr(0, 3000)}, .error = broken()});
  transport->push(
      {.status = 206, .headers = {{"Content-Range", "bytes 3000-9999/10000"}}, .chunks = {blob.substr(3000)}});
  const auto out = dir / "blob";
  const auto result = client.fetch_blob(wanted, blob.size(), out);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(read(out), blob);
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".partial"));
  ASSERT_EQ(transport->requests().size(), 2u);
  EXPECT_EQ(header_of(transport->requests()[0], "Range"), "");
  EXPECT_EQ(header_of(transport->requests()[1], "Range"), "bytes=3000-");
  EXPECT_EQ(transport->requests()[1].url, "http://reg.test:5000/v2/team/art/blobs/" + digest);
}

TEST_F(ClientFixture, FetchContinuesAPartialFileOfAnEarlierRun) {
  const std::string blob = "0123456789abcdefghij";
  auto client = make();
  const auto out = dir / "blob";
  write(out.string() + ".partial", blob.substr(0, 12));
  transport->push({.status = 206, .headers = {{"Content-Range", "bytes 12-19/20"}}, .chunks = {blob.substr(12)}});
  ASSERT_TRUE(client.fetch_blob(digest::sha256(blob), std::nullopt, out));
  EXPECT_EQ(header_of(transport->requests()[0], "Range"), "bytes=12-");
  EXPECT_EQ(read(out), blob);
}

TEST_F(ClientFixture, FetchRestartsCleanlyWhenTheServerIgnoresRange) {
  const std::string blob = "0123456789abcdefghij";
  auto client = make();
  const auto out = dir / "blob";
  write(out.string() + ".partial", "0123456789");
  transport->push({.status = 200, .chunks = {blob}});
  ASSERT_TRUE(client.fetch_blob(digest::sha256(blob), blob.size(), out));
  EXPECT_EQ(header_of(transport->requests()[0], "Range"), "bytes=10-");
  EXPECT_EQ(read(out), blob);
}

TEST_F(ClientFixture, FetchDigestMismatchRemovesThePartialFile) {
  const std::string blob = "the real bytes";
  auto client = make();
  const auto out = dir / "blob";
  transport->push({.status = 200, .chunks = {"the reaL bytes"}});
  const auto result = client.fetch_blob(digest::sha256(blob), blob.size(), out);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::digest_mismatch);
  EXPECT_NE(result.error().message.find(digest::sha256("the reaL bytes").to_string()), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".partial"));

  // More bytes than the descriptor says stops the transfer at once.
  transport->push({.status = 200, .chunks = {blob + "extra"}});
  EXPECT_EQ(client.fetch_blob(digest::sha256(blob), blob.size(), out).error().kind, ErrorKind::digest_mismatch);
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".partial"));
}

TEST_F(ClientFixture, FetchOfAMissingBlobIsNotFound) {
  auto client = make();
  transport->push(
      {.status = 404, .chunks = {R"({"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]})"}});
  const digest::Digest wanted = digest::sha256("nope");
  const std::string digest = wanted.to_string();
  const auto result = client.fetch_blob(wanted, std::nullopt, dir / "blob");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::not_found);
  EXPECT_EQ(result.error().message, "GET http://reg.test:5000/v2/team/art/blobs/" + digest + ": blob " + digest +
                                        ": HTTP 404 (BLOB_UNKNOWN: blob unknown to registry)");
}

TEST_F(ClientFixture, FetchKeepsThePartialFileWhenTheRegistryStaysAway) {
  const std::string blob(100, 'z');
  auto client = make();
  transport->push({.status = 200, .chunks = {blob.substr(0, 40)}, .error = broken()});
  for (int i = 0; i < 3; ++i) transport->push({.error = failure(TransportErrorKind::connect)});
  const auto out = dir / "blob";
  const auto result = client.fetch_blob(digest::sha256(blob), blob.size(), out);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::unreachable);
  EXPECT_EQ(std::filesystem::file_size(out.string() + ".partial"), 40u);
}

TEST_F(ClientFixture, PushSkipsABlobTheRegistryHas) {
  auto client = make();
  transport->push({.status = 200, .headers = {{"Content-Length", "5"}}});
  const auto pushed = client.push_blob(digest::sha256("hello"), std::string("hello"));
  ASSERT_TRUE(pushed) << pushed.error().message;
  EXPECT_FALSE(pushed->uploaded);
  ASSERT_EQ(transport->requests().size(), 1u);
  EXPECT_EQ(transport->requests()[0].method, "HEAD");
}

TEST_F(ClientFixture, MonolithicUpload) {
  auto client = make();
  const digest::Digest wanted = digest::sha256("hello");
  const std::string digest = wanted.to_string();
  transport->push({.status = 404});
  transport->push({.status = 202, .headers = {{"Location", "/v2/team/art/blobs/uploads/u1?_state=s"}}});
  transport->push({.status = 201, .headers = {{"Docker-Content-Digest", digest}}});
  const auto pushed = client.push_blob(wanted, std::string("hello"));
  ASSERT_TRUE(pushed) << pushed.error().message;
  EXPECT_TRUE(pushed->uploaded);
  ASSERT_EQ(transport->requests().size(), 3u);
  EXPECT_EQ(transport->requests()[1].method, "POST");
  EXPECT_EQ(transport->requests()[1].url, "http://reg.test:5000/v2/team/art/blobs/uploads/");
  EXPECT_EQ(transport->requests()[2].method, "PUT");
  EXPECT_EQ(transport->requests()[2].url,
            "http://reg.test:5000/v2/team/art/blobs/uploads/u1?_state=s&digest=sha256%3A" + digest.substr(7));
  EXPECT_EQ(std::get<std::string>(transport->requests()[2].body), "hello");
}

TEST_F(ClientFixture, ChunkedUploadFromAFile) {
  auto client = make();
  const std::string bytes = "0123456789";
  const auto file = dir / "blob";
  write(file, bytes);
  const digest::Digest wanted = digest::sha256(bytes);
  const std::string digest = wanted.to_string();
  transport->push({.status = 404});
  transport->push({.status = 202, .headers = {{"Location", "/v2/team/art/blobs/uploads/u1"}}});
  transport->push({.status = 202, .headers = {{"Location", "/v2/team/art/blobs/uploads/u1?s=1"}, {"Range", "0-3"}}});
  transport->push({.status = 202, .headers = {{"Location", "/v2/team/art/blobs/uploads/u1?s=2"}, {"Range", "0-7"}}});
  transport->push({.status = 202, .headers = {{"Location", "/v2/team/art/blobs/uploads/u1?s=3"}, {"Range", "0-9"}}});
  transport->push({.status = 201});
  const auto pushed = client.push_blob(wanted, file, {.mode = UploadMode::chunked, .chunk_size = 4});
  ASSERT_TRUE(pushed) << pushed.error().message;
  ASSERT_EQ(transport->requests().size(), 6u);
  const auto patch = transport->requests()[3];
  EXPECT_EQ(patch.method, "PATCH");
  EXPECT_EQ(patch.url, "http://reg.test:5000/v2/team/art/blobs/uploads/u1?s=1");
  EXPECT_EQ(header_of(patch, "Content-Range"), "4-7");
  const auto& slice = std::get<FileSlice>(patch.body);
  EXPECT_EQ(slice.offset, 4u);
  EXPECT_EQ(slice.size, 4u);
  EXPECT_EQ(header_of(transport->requests()[4], "Content-Range"), "8-9");
  EXPECT_EQ(transport->requests()[5].url,
            "http://reg.test:5000/v2/team/art/blobs/uploads/u1?s=3&digest=sha256%3A" + digest.substr(7));
  EXPECT_EQ(std::get<std::string>(transport->requests()[5].body), "");
}

TEST_F(ClientFixture, ManifestByDigestIsVerified) {
  auto client = make();
  const std::string body = R"({"schemaVersion":2})";
  const std::string digest = digest::sha256(body).to_string();
  transport->push({.status = 200,
                   .headers = {{"Content-Type", "application/vnd.oci.image.manifest.v1+json; x=y"}},
                   .chunks = {body}});
  auto got = client.get_manifest(digest);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->media_type, k_oci_manifest);
  EXPECT_EQ(got->body, body);
  EXPECT_NE(header_of(transport->requests()[0], "Accept").find(k_oci_index), std::string::npos);

  transport->push({.status = 200, .chunks = {body + " "}});
  got = client.get_manifest(digest);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().kind, ErrorKind::digest_mismatch);
  // By tag, the registry's Docker-Content-Digest is the claim checked.
  transport->push({.status = 200, .headers = {{"Docker-Content-Digest", digest}}, .chunks = {body + " "}});
  EXPECT_EQ(client.get_manifest("latest").error().kind, ErrorKind::digest_mismatch);
  EXPECT_EQ(client.get_manifest("../x").error().kind, ErrorKind::invalid);
}

TEST_F(ClientFixture, TagsFollowLinkPaginationOnThisRepositoryOnly) {
  auto client = make();
  transport->push({.status = 200,
                   .headers = {{"Link", R"(</v2/team/art/tags/list?last=b&n=2>; rel="next")"}},
                   .chunks = {R"({"name":"team/art","tags":["a","b"]})"}});
  transport->push({.status = 200, .chunks = {R"({"name":"team/art","tags":["c"]})"}});
  auto tags = client.list_tags(2);
  ASSERT_TRUE(tags) << tags.error().message;
  EXPECT_EQ(*tags, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(transport->requests()[0].url, "http://reg.test:5000/v2/team/art/tags/list?n=2");
  EXPECT_EQ(transport->requests()[1].url, "http://reg.test:5000/v2/team/art/tags/list?last=b&n=2");

  transport->push({.status = 200, .chunks = {R"({"name":"team/art","tags":null})"}});
  EXPECT_EQ(client.list_tags().value(), std::vector<std::string>{});
  transport->push({.status = 200,
                   .headers = {{"Link", R"(<https://evil.test/v2/team/art/tags/list>; rel="next")"}},
                   .chunks = {R"({"tags":["a"]})"}});
  EXPECT_EQ(client.list_tags().error().kind, ErrorKind::protocol);
  transport->push({.status = 200, .chunks = {R"({"tags":["a/b"]})"}});
  EXPECT_EQ(client.list_tags().error().kind, ErrorKind::protocol);
}

// doctor's repository check: one page, never followed; a repository the
// registry does not know yet is nothing, not an error.
TEST_F(ClientFixture, FirstTagsReadsOnePageAndAnUnknownRepositoryIsNothing) {
  auto client = make();
  transport->push({.status = 200,
                   .headers = {{"Link", R"(</v2/team/art/tags/list?last=a&n=1>; rel="next")"}},
                   .chunks = {R"({"name":"team/art","tags":["a"]})"}});
  auto tags = client.first_tags(1);
  ASSERT_TRUE(tags) << tags.error().message;
  ASSERT_TRUE(tags->has_value());
  EXPECT_EQ(**tags, std::vector<std::string>{"a"});
  ASSERT_EQ(transport->requests().size(), 1u);
  EXPECT_EQ(transport->requests()[0].url, "http://reg.test:5000/v2/team/art/tags/list?n=1");

  transport->push(
      {.status = 404,
       .chunks = {R"({"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]})"}});
  tags = client.first_tags(1);
  ASSERT_TRUE(tags) << tags.error().message;
  EXPECT_FALSE(tags->has_value());
  transport->push({.status = 403, .chunks = {R"({"errors":[{"code":"DENIED","message":"no"}]})"}});
  EXPECT_EQ(client.first_tags(1).error().kind, ErrorKind::denied);
}

TEST_F(ClientFixture, ReferrersFallBackToTheTagSchema) {
  auto client = make();
  const digest::Digest subject = digest::sha256("artifact");
  Index index;
  Descriptor sig = describe(k_oci_manifest, "sig");
  sig.artifact_type = std::string(k_signature_artifact_type);
  Descriptor other = describe(k_oci_manifest, "sbom");
  other.artifact_type = "application/spdx+json";
  index.manifests = {sig, other};
  const std::string body = index_json(index);
  transport->push({.status = 404, .chunks = {"404 page not found"}});
  transport->push({.status = 200, .chunks = {body}});
  const auto found = client.referrers(subject, k_signature_artifact_type);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, std::vector<Descriptor>{sig});
  EXPECT_EQ(transport->requests()[0].url, "http://reg.test:5000/v2/team/art/referrers/" + subject.to_string() +
                                              "?artifactType=application%2Fvnd.orchestrate.signature.v1");
  EXPECT_EQ(transport->requests()[1].url, "http://reg.test:5000/v2/team/art/manifests/" + referrers_tag(subject));

  transport->push({.status = 404});
  transport->push({.status = 404});
  EXPECT_EQ(client.referrers(subject).value(), std::vector<Descriptor>{});
}

TEST_F(ClientFixture, PutReferrerMaintainsTheFallbackIndex) {
  auto client = make();
  const Descriptor subject = describe(k_oci_manifest, "artifact");
  const std::string body = signature_manifest(subject, describe(k_signature_layer, "sig"), "");
  const auto parsed = parse_manifest(body).value();
  const std::string digest = digest::sha256(body).to_string();
  transport->push({.status = 201});  // PUT by digest, no OCI-Subject header
  transport->push({.status = 404});  // no fallback index yet
  transport->push({.status = 201});  // PUT of the index
  ASSERT_EQ(client.put_referrer(parsed, body).value().to_string(), digest);
  ASSERT_EQ(transport->requests().size(), 3u);
  EXPECT_EQ(transport->requests()[2].url,
            "http://reg.test:5000/v2/team/art/manifests/" + referrers_tag(subject.digest));
  EXPECT_EQ(header_of(transport->requests()[2], "Content-Type"), k_oci_index);
  const auto stored = parse_index(std::get<std::string>(transport->requests()[2].body)).value();
  ASSERT_EQ(stored.manifests.size(), 1u);
  EXPECT_EQ(stored.manifests[0].digest.to_string(), digest);
  EXPECT_EQ(stored.manifests[0].artifact_type, k_signature_artifact_type);

  // A registry with the referrers API needs no fallback tag.
  transport->clear_requests();
  transport->push({.status = 201, .headers = {{"OCI-Subject", subject.digest.to_string()}}});
  ASSERT_TRUE(client.put_referrer(parsed, body));
  EXPECT_EQ(transport->requests().size(), 1u);
}

TEST(ClientOptionsTest, MalformedUrlIsBadInput) {
  EXPECT_THROW(Client(ClientOptions{.url = "http://u:pw@h/UPPER"}, std::make_shared<FakeTransport>()), util::Failure);
}

}  // namespace
}  // namespace orc::registry
