// Client::stream_blob against a scripted transport: the bytes reach the
// receiver once each, in order, across broken transfers resumed with Range,
// servers that answer a Range with the whole blob, and a receiver that stops.
#include <gtest/gtest.h>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/client.hpp"
#include "tests/unit/registry/test_support.hpp"

namespace orc::registry {
namespace {

using testing::broken;

using testing::header_of;

// Bytes that differ from their neighbours, so a repeated or skipped range shows.
std::string numbered_blob(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7 + i / 251) % 256);
  return out;
}

struct StreamBlob : testing::ScriptedClient {
  // What the receiver was given, and in how many calls.
  std::string received;
  int calls = 0;

  std::function<bool(std::string_view)> receiver() {
    return [this](std::string_view bytes) {
      ++calls;
      received.append(bytes);
      return true;
    };
  }
};

TEST_F(StreamBlob, StreamResumesWithRangeAfterABrokenTransfer) {
  const std::string blob = numbered_blob(10'000);
  const digest::Digest digest = digest::sha256(blob);
  auto client = make();
  transport->push(
      {.status = 200, .headers = {{"Content-Length", "10000"}}, .chunks = {blob.substr(0, 3000)}, .error = broken()});
  transport->push(
      {.status = 206, .headers = {{"Content-Range", "bytes 3000-9999/10000"}}, .chunks = {blob.substr(3000)}});
  const auto result = client.stream_blob(digest, blob.size(), receiver());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(received.size(), blob.size());
  EXPECT_TRUE(received == blob);
  ASSERT_EQ(transport->requests().size(), 2u);
  EXPECT_EQ(transport->requests()[0].method, "GET");
  EXPECT_EQ(transport->requests()[0].url, "http://reg.test:5000/v2/team/art/blobs/" + digest.to_string());
  EXPECT_EQ(header_of(transport->requests()[0], "Range"), "");
  EXPECT_EQ(header_of(transport->requests()[1], "Range"), "bytes=3000-");
  EXPECT_EQ(transport->requests()[1].url, transport->requests()[0].url);
  EXPECT_EQ(sleeps.size(), 1u);
}

TEST_F(StreamBlob, WholeBlobAgainAfterARangeRequestIsGivenOnlyOnce) {
  const std::string blob = numbered_blob(10'000);
  auto client = make();
  transport->push({.status = 200, .chunks = {blob.substr(0, 3000)}, .error = broken()});
  transport->push({.status = 200, .chunks = {blob}});  // ignores the Range
  const auto result = client.stream_blob(digest::sha256(blob), blob.size(), receiver());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(received.size(), blob.size());
  EXPECT_TRUE(received == blob);
  ASSERT_EQ(transport->requests().size(), 2u);
  EXPECT_EQ(header_of(transport->requests()[1], "Range"), "bytes=3000-");
}

TEST_F(StreamBlob, ARestartThatBreaksBeforeTheBytesGivenStillGivesEachByteOnce) {
  const std::string blob = numbered_blob(10'000);
  auto client = make();
  transport->push({.status = 200, .chunks = {blob.substr(0, 3000)}, .error = broken()});  // 3000 given
  transport->push({.status = 200,
                   .chunks = {blob.substr(0, 1000)},
                   .error = broken()});  // from 0 again, breaks inside what was given
  transport->push(
      {.status = 206, .headers = {{"Content-Range", "bytes 1000-9999/10000"}}, .chunks = {blob.substr(1000)}});
  const auto result = client.stream_blob(digest::sha256(blob), blob.size(), receiver());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(received.size(), blob.size());
  EXPECT_TRUE(received == blob);
  ASSERT_EQ(transport->requests().size(), 3u);
  EXPECT_EQ(header_of(transport->requests()[1], "Range"), "bytes=3000-");
  EXPECT_EQ(header_of(transport->requests()[2], "Range"), "bytes=1000-");
}

TEST_F(StreamBlob, ARestartThatBreaksPastTheBytesGivenGivesOnlyTheNewOnes) {
  const std::string blob = numbered_blob(10'000);
  auto client = make();
  transport->push({.status = 200, .chunks = {blob.substr(0, 3000)}, .error = broken()});
  transport->push({.status = 200, .chunks = {blob.substr(0, 5000)}, .error = broken()});
  transport->push(
      {.status = 206, .headers = {{"Content-Range", "bytes 5000-9999/10000"}}, .chunks = {blob.substr(5000)}});
  const auto result = client.stream_blob(digest::sha256(blob), blob.size(), receiver());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(received.size(), blob.size());
  EXPECT_TRUE(received == blob);
  EXPECT_EQ(header_of(transport->requests()[2], "Range"), "bytes=5000-");
  EXPECT_EQ(calls, 3);  // 0-3000, 3000-5000, 5000-10000: nothing empty, nothing twice
}

TEST_F(StreamBlob, AConnectionThatEndsCleanlyButEarlyIsResumed) {
  const std::string blob = numbered_blob(4'000);
  auto client = make();
  transport->push({.status = 200, .chunks = {blob.substr(0, 1500)}});
  transport->push(
      {.status = 206, .headers = {{"Content-Range", "bytes 1500-3999/4000"}}, .chunks = {blob.substr(1500)}});
  const auto result = client.stream_blob(digest::sha256(blob), blob.size(), receiver());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(received == blob);
  EXPECT_EQ(header_of(transport->requests()[1], "Range"), "bytes=1500-");
}

TEST_F(StreamBlob, ReceiverReturningFalseStopsWithIoAndNoMoreRequests) {
  const std::string blob = numbered_blob(10'000);
  auto client = make();
  transport->push({.status = 200, .chunks = {blob}});
  transport->push({.status = 200, .chunks = {blob}});  // must not be asked for
  const auto result = client.stream_blob(digest::sha256(blob), blob.size(), [&](std::string_view bytes) {
    ++calls;
    received.append(bytes);
    return false;
  });
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::io);
  EXPECT_NE(result.error().message.find("receiver stopped"), std::string::npos) << result.error().message;
  EXPECT_EQ(transport->requests().size(), 1u);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(sleeps.empty());
}

TEST_F(StreamBlob, ReceiverStoppingAfterAResumeStopsThere) {
  const std::string blob = numbered_blob(10'000);
  auto client = make();
  transport->push({.status = 200, .chunks = {blob.substr(0, 3000)}, .error = broken()});
  transport->push(
      {.status = 206, .headers = {{"Content-Range", "bytes 3000-9999/10000"}}, .chunks = {blob.substr(3000)}});
  transport->push(
      {.status = 206, .headers = {{"Content-Range", "bytes 3000-9999/10000"}}, .chunks = {blob.substr(3000)}});
  const auto result = client.stream_blob(digest::sha256(blob), blob.size(), [&](std::string_view bytes) {
    received.append(bytes);
    return ++calls < 2;
  });
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::io);
  EXPECT_EQ(transport->requests().size(), 2u);
  EXPECT_TRUE(received == blob);  // the second call had the rest; it just said stop
}

// The client takes a digest::Digest: a bad digest is refused where its text
// is parsed (Digest::parse), so it never becomes a request.
TEST_F(StreamBlob, BadDigestIsInvalidAndSendsNothing) {
  auto client = make();
  const std::vector<std::string> bad{"sha256:abc", "md5:" + std::string(32, '0'), "", "sha256:" + std::string(64, 'G'),
                                     "sha256:../../v2/other"};
  for (const auto& digest : bad) {
    SCOPED_TRACE(digest);
    EXPECT_FALSE(digest::Digest::parse(digest));
  }
  EXPECT_TRUE(transport->requests().empty());
  EXPECT_EQ(calls, 0);
}

TEST_F(StreamBlob, MoreBytesThanTheSizeAreNeverGiven) {
  const std::string blob = numbered_blob(100);
  auto client = make();
  transport->push({.status = 200, .chunks = {blob + "extra"}});
  const auto result = client.stream_blob(digest::sha256(blob), blob.size(), receiver());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::digest_mismatch);
  EXPECT_LE(received.size(), blob.size());
  EXPECT_EQ(transport->requests().size(), 1u);
}

TEST_F(StreamBlob, AContinuationFromTheWrongOffsetIsAProtocolError) {
  const std::string blob = numbered_blob(10'000);
  auto client = make();
  transport->push({.status = 200, .chunks = {blob.substr(0, 3000)}, .error = broken()});
  transport->push(
      {.status = 206, .headers = {{"Content-Range", "bytes 2000-9999/10000"}}, .chunks = {blob.substr(2000)}});
  const auto result = client.stream_blob(digest::sha256(blob), blob.size(), receiver());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::protocol);
  EXPECT_TRUE(received == blob.substr(0, 3000));  // nothing given from the bad answer
  EXPECT_EQ(transport->requests().size(), 2u);
}

TEST_F(StreamBlob, AMissingBlobIsNotFoundAndNothingIsGiven) {
  auto client = make();
  transport->push(
      {.status = 404, .chunks = {R"({"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]})"}});
  const auto result = client.stream_blob(digest::sha256("nope"), 4, receiver());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::not_found);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace orc::registry
