#pragma once
// A scripted registry Transport for unit tests: each request gets the next
// scripted answer (or a handler's), and every request is recorded so a test
// can assert what was sent. A scripted answer can cut its body after some
// bytes, the way a dropped connection does.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/registry/client.hpp"
#include "orchestrator/registry/transport.hpp"

namespace orc::registry::testing {

struct Answer {
  int status = 200;
  Headers headers;
  std::string body;
  std::optional<TransportErrorKind> error;                 // fail instead of answering
  std::size_t cut_after = std::string::npos;               // body bytes delivered before the connection breaks
  TransportErrorKind cut_as = TransportErrorKind::broken;  // how it breaks: broken, or timeout
};

class FakeTransport final : public Transport {
 public:
  void push(Answer answer) { m_script.push_back(std::move(answer)); }
  void handle_with(std::function<Answer(const Request&)> handler) { m_handler = std::move(handler); }

  std::expected<Response, TransportError> send(const Request& request, BodySink* sink) override {
    requests.push_back(request);
    Answer answer;
    if (!m_script.empty()) {
      answer = std::move(m_script.front());
      m_script.pop_front();
    } else if (m_handler) {
      answer = m_handler(request);
    } else {
      ADD_FAILURE() << "unscripted request: " << request.method << " " << request.url;
      return std::unexpected(TransportError{TransportErrorKind::other, "unscripted"});
    }
    if (answer.error) return std::unexpected(TransportError{*answer.error, "scripted failure", 0, body_size(request)});
    Response response{.status = answer.status, .headers = answer.headers};
    const bool cut = answer.cut_after < answer.body.size();
    const std::string bytes = answer.body.substr(0, answer.cut_after);
    if (sink && response.ok()) {
      if (!sink->start(response) || (!bytes.empty() && !sink->chunk(bytes)))
        return std::unexpected(TransportError{TransportErrorKind::aborted, "stopped by the receiver"});
    } else {
      response.body = bytes;
    }
    if (cut)
      return std::unexpected(TransportError{answer.cut_as, "connection reset", bytes.size(), body_size(request)});
    return response;
  }

  std::vector<Request> requests;

 private:
  // What a failed request had sent: all of its body, for the scripted cases.
  static std::uint64_t body_size(const Request& request) {
    if (const auto* slice = std::get_if<FileSlice>(&request.body)) return slice->size;
    return std::get<std::string>(request.body).size();
  }

  std::deque<Answer> m_script;
  std::function<Answer(const Request&)> m_handler;
};

inline std::string header_of(const Request& request, std::string_view name) {
  return find_header(request.headers, name).value_or("");
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
