#pragma once
// What the registry client's tests share: a Client over the scripted
// transport (tests/unit/net/fake_transport.hpp) with a stepped clock.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/registry/client.hpp"
#include "tests/unit/net/fake_transport.hpp"

namespace orc::registry::testing {

using net::testing::failure;
using net::testing::FakeTransport;
using net::testing::Reply;

inline std::string header_of(const net::Request& request, std::string_view name) {
  return net::find_header(request.headers, name).value_or("");
}

// How a scripted connection drops (or, `as` timeout, stalls) after the
// chunks it delivered.
inline net::TransportError broken(net::TransportErrorKind as = net::TransportErrorKind::closed) {
  return net::testing::failure(as, "connection reset");
}

inline constexpr const char* k_origin = "http://reg.test:5000";

// A Client over a FakeTransport that records its backoff sleeps (not
// slept: they step the client's clock, `now`) and its log lines: the base
// of the client tests' fixtures. A handler steps `now` to stand for the
// time a request took.
struct ScriptedClient : ::testing::Test {
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();
  std::vector<std::chrono::milliseconds> sleeps;
  std::string log;
  std::chrono::steady_clock::time_point now{};
  DeadlinePolicy deadlines;

  Client make(std::string url = std::string(k_origin) + "/team/art", std::optional<Credentials> credentials = {}) {
    using std::chrono::milliseconds;
    return Client(
        ClientOptions{.url = std::move(url),
                      .credentials = std::move(credentials),
                      .retry = {.max_attempts = 3, .base_delay = milliseconds(100), .max_delay = milliseconds(1000)},
                      .deadlines = deadlines,
                      .sleep =
                          [this](milliseconds d) {
                            sleeps.push_back(d);
                            now += d;
                          },
                      .clock = [this] { return now; },
                      .log = [this](std::string_view line) { log += std::string(line) + "\n"; }},
        transport);
  }
};

}  // namespace orc::registry::testing
