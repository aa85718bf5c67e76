// Deadlines of registry operations (deadline.hpp) against a scripted
// transport and a stepped clock: a budget that scales with the size, one
// deadline for every retry and Range resume of an operation, and a message
// that names what timed out, its deadline and the bytes that came.
#include "orchestrator/registry/deadline.hpp"

#include <gtest/gtest.h>

#include <string>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/client.hpp"
#include "tests/unit/registry/test_support.hpp"

namespace orc::registry {
namespace {

using net::Request;
using net::TransportErrorKind;
using testing::broken;
using testing::failure;

using std::chrono::milliseconds;
using testing::header_of;
using testing::Reply;

TEST(DeadlinePolicyTest, ABlobGetsTheBasePlusItsSizeAtTheMinimumRate) {
  const DeadlinePolicy policy{.base = milliseconds(60'000), .min_rate = 512 << 10};
  EXPECT_EQ(deadline_for(policy, 0), milliseconds(60'000));
  EXPECT_EQ(deadline_for(policy, 512 << 10), milliseconds(61'000));
  EXPECT_EQ(deadline_for(policy, 301u << 20), milliseconds(60'000 + 602'000));
  EXPECT_EQ(deadline_for(policy, 256 << 10), milliseconds(60'500));
  // A hostile size saturates instead of wrapping to a short deadline.
  EXPECT_GT(deadline_for(policy, UINT64_MAX), milliseconds(60'000));
  EXPECT_GT(deadline_for({.base = milliseconds(1), .min_rate = 1}, UINT64_MAX), milliseconds(1));
}

TEST(DeadlinePolicyTest, SecondsAreWrittenShort) {
  EXPECT_EQ(seconds_text(milliseconds(60'000)), "60 s");
  EXPECT_EQ(seconds_text(milliseconds(2'500)), "2.5 s");
  EXPECT_EQ(seconds_text(milliseconds(662'400)), "662 s");
}

// Bytes that differ from their neighbours, so a repeated or skipped range shows.
std::string numbered_blob(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7 + i / 251) % 256);
  return out;
}

// The first byte a Range request asks for (0 without one).
std::size_t range_start(const Request& request) {
  const std::string range = header_of(request, "Range");
  return range.empty() ? 0 : std::stoul(range.substr(6));
}

struct Deadlines : testing::ScriptedClient {
  std::string received;

  std::function<bool(std::string_view)> receiver() {
    return [this](std::string_view bytes) {
      received.append(bytes);
      return true;
    };
  }
};

// A registry that sends 100 bytes a second and breaks the connection after
// each second: every break is a resume that makes progress, which used to
// get a fresh, unbounded attempt each time.
TEST_F(Deadlines, RangeResumesShareTheDownloadsOneDeadline) {
  deadlines = {.base = milliseconds(2'000), .min_rate = 1 << 20};
  const std::string blob = numbered_blob(1 << 20);
  const digest::Digest wanted = digest::sha256(blob);
  const std::string digest = wanted.to_string();
  auto client = make();
  transport->handle_with([&](const Request& request) {
    now += milliseconds(1'000);
    const std::size_t from = range_start(request);
    return Reply{.status = from ? 206 : 200,
                 .headers = {{"Content-Range", "bytes " + std::to_string(from) + "-" + std::to_string(blob.size() - 1) +
                                                   "/" + std::to_string(blob.size())}},
                 .chunks = {blob.substr(from, 100)},
                 .error = broken()};
  });
  const auto result = client.stream_blob(wanted, blob.size(), receiver());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::timeout);
  // 2 s + 1 MiB at 1 MiB/s: three seconds in all, whatever the resumes.
  ASSERT_EQ(transport->requests().size(), 3u);
  EXPECT_EQ(transport->requests()[0].timeout, milliseconds(3'000));
  EXPECT_EQ(transport->requests()[1].timeout, milliseconds(3'000 - 1'000 - 100));
  EXPECT_EQ(header_of(transport->requests()[1], "Range"), "bytes=100-");
  EXPECT_EQ(transport->requests()[2].timeout, milliseconds(3'000 - 2'000 - 200));
  EXPECT_EQ(received, blob.substr(0, 300));
  EXPECT_EQ(result.error().message, "GET blob " + digest +
                                        " (1.0 MiB) from http://reg.test:5000/team/art timed out: 300 B of 1.0 MiB "
                                        "came within its deadline of 3 s (2 s + 1.0 MiB at 1.0 MiB/s)");
}

// curl ends a trickling exchange when the request's timeout (what is left
// of the deadline) runs out: the operation fails then, with no retry.
TEST_F(Deadlines, ATricklingManifestTimesOutWithoutRetries) {
  deadlines = {.base = milliseconds(2'000)};
  auto client = make();
  transport->handle_with([&](const Request& request) {
    now += request.timeout;
    return Reply{.status = 200, .chunks = {"{\"sch"}, .error = broken(TransportErrorKind::timeout)};
  });
  const auto result = client.get_manifest("saxpy--tier-new");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::timeout);
  EXPECT_EQ(result.error().message,
            "GET manifest saxpy--tier-new from http://reg.test:5000/team/art timed out: 5 B came within its deadline "
            "of 2 s (the budget of a small exchange)");
  ASSERT_EQ(transport->requests().size(), 1u);
  EXPECT_EQ(transport->requests()[0].timeout, milliseconds(2'000));
  EXPECT_TRUE(sleeps.empty());
}

// Retries of a failing server wait no longer than the deadline allows, and
// the last one says it timed out.
TEST_F(Deadlines, RetriesStopAtTheDeadline) {
  deadlines = {.base = milliseconds(1'500)};
  auto client = make();
  transport->handle_with([&](const Request&) {
    now += milliseconds(700);
    return Reply{.status = 503};
  });
  const auto result = client.ping();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::timeout);
  EXPECT_NE(result.error().message.find("GET /v2/ (the API check) from http://reg.test:5000/team/art timed out"),
            std::string::npos)
      << result.error().message;
  // 700 ms, a 100 ms backoff, 700 ms: the deadline of 1.5 s has passed.
  ASSERT_EQ(transport->requests().size(), 2u);
  EXPECT_EQ(transport->requests()[1].timeout, milliseconds(700));
}

// A token service that holds the request is a timeout of the operation,
// not "the registry refused the credentials".
TEST_F(Deadlines, ASlowTokenServiceIsATimeout) {
  deadlines = {.base = milliseconds(1'000)};
  auto client = make(std::string(testing::k_origin) + "/team/art", Credentials{"ci", "pw"});
  transport->push({.status = 401, .headers = {{"WWW-Authenticate", R"(Bearer realm="https://auth.test/token")"}}});
  transport->handle_with([&](const Request& request) {
    now += request.timeout;
    return Reply{.error = failure(TransportErrorKind::timeout)};
  });
  const auto result = client.blob_size(digest::sha256("x"));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::timeout);
  EXPECT_NE(result.error().message.find("HEAD blob sha256:"), std::string::npos) << result.error().message;
  ASSERT_EQ(transport->requests().size(), 2u);
  EXPECT_EQ(transport->requests()[1].url, "https://auth.test/token");
  EXPECT_EQ(transport->requests()[1].timeout, milliseconds(1'000));
}

// An upload's deadline counts its size, and its message the bytes that went.
TEST_F(Deadlines, AnUploadSaysHowManyBytesWent) {
  deadlines = {.base = milliseconds(1'000), .min_rate = 1'000};
  const std::string bytes(3'000, 'x');
  const digest::Digest wanted = digest::sha256(bytes);
  const std::string digest = wanted.to_string();
  auto client = make();
  transport->push({.status = 404});
  transport->push({.status = 202, .headers = {{"Location", "/v2/team/art/blobs/uploads/u1"}}});
  transport->handle_with([&](const Request& request) {
    now += request.timeout;
    return Reply{.error = failure(TransportErrorKind::timeout)};
  });
  const auto result = client.push_blob(wanted, bytes);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::timeout);
  EXPECT_EQ(result.error().message, "PUT blob " + digest +
                                        " (2.9 KiB) to http://reg.test:5000/team/art timed out: 2.9 KiB of 2.9 KiB "
                                        "went within its deadline of 4 s (1 s + 2.9 KiB at 1000 B/s)");
  ASSERT_EQ(transport->requests().size(), 3u);
  EXPECT_EQ(transport->requests()[0].timeout, milliseconds(4'000));
}

// A transfer at an honest pace under the same policy completes.
TEST_F(Deadlines, ABlobInsideItsDeadlineCompletes) {
  deadlines = {.base = milliseconds(2'000), .min_rate = 1 << 20};
  const std::string blob = numbered_blob(1 << 20);
  auto client = make();
  transport->handle_with([&](const Request&) {
    now += milliseconds(2'500);
    return Reply{.status = 200, .chunks = {blob}};
  });
  const auto result = client.stream_blob(digest::sha256(blob), blob.size(), receiver());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(received == blob);
}

}  // namespace
}  // namespace orc::registry
