// net::cancellable (issue 28): one flag, set by a signal handler or a
// deadline, reaches every request sent through the transport, whichever
// client made it, and stops a transfer under way.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "orchestrator/net/http.hpp"
#include "tests/unit/net/fake_transport.hpp"

namespace orc::net {
namespace {

using testing::FakeTransport;
using testing::Reply;

TEST(Cancellable, TheFlagStopsATransferUnderWayAndEveryRequestAfter) {
  std::atomic<bool> stop{false};
  auto inner = std::make_shared<FakeTransport>();
  // A stream the server never ends: only the flag ends it.
  inner->push(Reply{.method = "GET", .url = "http://feed/slow", .status = 200, .chunks = {"{"}, .hold = true});
  const auto transport = cancellable(inner, &stop);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.store(true);
  });
  CallbackSink sink([](std::string_view) { return true; });
  const auto held = transport->send(Request{.method = "GET", .url = "http://feed/slow"}, &sink);
  stopper.join();
  ASSERT_FALSE(held);
  EXPECT_EQ(held.error().kind, TransportErrorKind::cancelled);
  ASSERT_EQ(inner->requests().size(), 1u);
  EXPECT_EQ(inner->requests()[0].cancel, &stop);
  // Once set, nothing more is sent.
  const auto after = transport->send(Request{.method = "GET", .url = "http://feed/next"});
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().kind, TransportErrorKind::cancelled);
  EXPECT_EQ(inner->requests().size(), 1u);
}

TEST(Cancellable, ARequestsOwnFlagIsKept) {
  std::atomic<bool> stop{false};
  std::atomic<bool> own{false};
  auto inner = std::make_shared<FakeTransport>(std::vector<Reply>{testing::answer("GET", "http://feed/a", 200, "ok")});
  const auto response =
      cancellable(inner, &stop)->send(Request{.method = "GET", .url = "http://feed/a", .cancel = &own});
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "ok");
  EXPECT_EQ(inner->requests().at(0).cancel, &own);
}

}  // namespace
}  // namespace orc::net
