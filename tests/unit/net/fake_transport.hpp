#pragma once
// The one scripted net::Transport, for the protocol tests of engine and
// registry: each request gets the next scripted Reply (or, when the script
// is empty, a handler's), its body handed to the sink in the chunks given
// (so frames, JSON lines and blobs can be split or cut anywhere), then a
// TransportError if one is scripted. Every request is recorded so a test can
// assert what was sent.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "orchestrator/net/http.hpp"

namespace orc::net::testing {

struct Reply {
  // The request this reply expects, compared exactly; empty: any.
  std::string method;
  std::string url;
  int status = 200;
  Headers headers;
  std::vector<std::string> chunks;  // the body, in delivery order
  // Instead of the end of the response, after the chunks: how a request
  // fails or a connection breaks. Its received and sent counts are filled
  // in (the chunks' bytes, the request's body) when left at zero.
  std::optional<TransportError> error;
  std::function<void()> before;  // runs when the request arrives
  bool hold = false;             // after the chunks, stays open until the request's cancel flag is set
};

// A reply to `method url` with `status` and `body` in one chunk.
inline Reply answer(std::string method, std::string url, int status, std::string body = {}) {
  return Reply{.method = std::move(method), .url = std::move(url), .status = status, .chunks = {std::move(body)}};
}

// A scripted failure of `kind`, for Reply::error.
inline TransportError failure(TransportErrorKind kind, std::string message = "scripted failure") {
  return TransportError{.kind = kind, .message = std::move(message)};
}

class FakeTransport final : public Transport {
 public:
  FakeTransport() = default;
  explicit FakeTransport(std::vector<Reply> script) : m_script(script.begin(), script.end()) {}

  void push(Reply reply) {
    std::lock_guard lock(m_mutex);
    m_script.push_back(std::move(reply));
  }
  // Answers the requests that find the script empty.
  void handle_with(std::function<Reply(const Request&)> handler) { m_handler = std::move(handler); }

  std::expected<Response, TransportError> send(const Request& request, BodySink* sink) override {
    std::optional<Reply> scripted;
    {
      std::lock_guard lock(m_mutex);
      m_requests.push_back(request);
      if (!m_script.empty()) {
        scripted = std::move(m_script.front());
        m_script.pop_front();
      } else if (!m_handler) {
        ADD_FAILURE() << "unscripted request " << request.method << " " << request.url;
        return std::unexpected(failure(TransportErrorKind::other, "unscripted"));
      }
    }
    if (!scripted) return play(request, m_handler(request), sink);
    if (!scripted->method.empty() || !scripted->url.empty()) {
      EXPECT_EQ(request.method + " " + request.url, scripted->method + " " + scripted->url);
    }
    return play(request, std::move(*scripted), sink);
  }

  // Copies, so a test can read them after the transport moved into a client.
  std::vector<Request> requests() const {
    std::lock_guard lock(m_mutex);
    return m_requests;
  }
  void clear_requests() {
    std::lock_guard lock(m_mutex);
    m_requests.clear();
  }
  std::size_t left() const {
    std::lock_guard lock(m_mutex);
    return m_script.size();
  }

 private:
  static std::expected<Response, TransportError> play(const Request& request, Reply reply, BodySink* sink) {
    if (reply.before) reply.before();
    const auto fail = [&](std::uint64_t received) {
      TransportError error = std::move(*reply.error);
      if (error.received == 0) error.received = received;
      if (error.sent == 0) error.sent = body_size(request.body);
      return std::unexpected(std::move(error));
    };
    // A failure with no body never produced a response.
    if (reply.error && reply.chunks.empty()) return fail(0);
    Response response{.status = reply.status, .headers = reply.headers};
    const bool streamed = sink && response.ok();
    if (streamed && !sink->start(response))
      return std::unexpected(failure(TransportErrorKind::aborted, "stopped by the receiver"));
    std::uint64_t delivered = 0;
    for (const auto& chunk : reply.chunks) {
      delivered += chunk.size();
      if (!streamed) {
        response.body += chunk;
        continue;
      }
      if (!chunk.empty() && !sink->chunk(chunk))
        return std::unexpected(failure(TransportErrorKind::aborted, "stopped by the receiver"));
      if (request.cancel && request.cancel->load())
        return std::unexpected(failure(TransportErrorKind::cancelled, "cancelled"));
    }
    if (reply.hold) {  // a stream the server never ends (a test that never cancels fails on its timeout)
      while (!(request.cancel && request.cancel->load())) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return std::unexpected(failure(TransportErrorKind::cancelled, "cancelled"));
    }
    if (reply.error) return fail(delivered);
    return response;
  }

  mutable std::mutex m_mutex;
  std::deque<Reply> m_script;
  std::function<Reply(const Request&)> m_handler;
  std::vector<Request> m_requests;
};

}  // namespace orc::net::testing
