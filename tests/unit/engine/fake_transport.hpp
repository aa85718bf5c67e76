#pragma once
// A scripted Transport for the engine's protocol tests: each expected
// request (method and target) is answered with a canned response, its body
// handed to the sink in the chunks given (so frames and JSON lines can be
// split anywhere), or with a TransportError. Requests are recorded.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/engine/http.hpp"
#include "orchestrator/engine/log_stream.hpp"

namespace orc::engine::testing {

struct Reply {
  std::string method;
  std::string target;  // compared exactly
  int status = 200;
  std::vector<std::string> chunks;  // the body, in delivery order
  Headers headers;
  std::optional<TransportError> error;  // instead of a response (after the chunks)
  std::function<void()> before;         // runs when the request arrives
  bool hold = false;  // after the chunks, stays open until the request's cancel flag is set
};

inline Reply answer(std::string method, std::string target, int status, std::string body = {}) {
  return Reply{.method = std::move(method), .target = std::move(target), .status = status, .chunks = {std::move(body)}};
}

class FakeTransport final : public Transport {
 public:
  explicit FakeTransport(std::vector<Reply> script) : m_script(script.begin(), script.end()) {}

  std::expected<Response, TransportError> send(const Request& request, StreamSink* sink) override {
    Reply reply;
    {
      std::lock_guard lock(m_mutex);
      m_requests.push_back(request);
      if (m_script.empty()) {
        ADD_FAILURE() << "unexpected request " << request.method << " " << request.target;
        return std::unexpected(TransportError{TransportErrorKind::other, "unscripted"});
      }
      reply = std::move(m_script.front());
      m_script.pop_front();
    }
    EXPECT_EQ(request.method + " " + request.target, reply.method + " " + reply.target);
    if (reply.before) reply.before();
    Response response{.status = reply.status, .headers = reply.headers};
    for (const auto& chunk : reply.chunks) {
      if (sink && response.ok()) {
        if (!sink->on_chunk(chunk)) return std::unexpected(TransportError{TransportErrorKind::aborted, "stopped"});
        if (request.cancel && request.cancel->load())
          return std::unexpected(TransportError{TransportErrorKind::cancelled, "cancelled"});
      } else {
        response.body += chunk;
      }
    }
    if (reply.hold) {  // a stream the server never ends (a test that never cancels fails on its timeout)
      while (!(request.cancel && request.cancel->load())) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return std::unexpected(TransportError{TransportErrorKind::cancelled, "cancelled"});
    }
    if (reply.error) return std::unexpected(*reply.error);
    return response;
  }

  // Copies, so a test can read them after the transport moved into a client.
  std::vector<Request> requests() const {
    std::lock_guard lock(m_mutex);
    return m_requests;
  }
  std::size_t left() const {
    std::lock_guard lock(m_mutex);
    return m_script.size();
  }

 private:
  mutable std::mutex m_mutex;
  std::deque<Reply> m_script;
  std::vector<Request> m_requests;
};

inline constexpr const char* k_docker_version =
    R"({"Platform":{"Name":"Docker Engine - Community"},"Components":[{"Name":"Engine","Version":"20.10.24"}],)"
    R"("Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12","Os":"linux","Arch":"amd64"})";
inline constexpr const char* k_podman_version =
    R"({"Platform":{"Name":"linux/amd64/debian-12"},"Components":[{"Name":"Podman Engine","Version":"4.3.1"}],)"
    R"("Version":"4.3.1","ApiVersion":"1.41","MinAPIVersion":"1.24","Os":"linux","Arch":"amd64"})";

// A LogSink that keeps what it is given.
struct CollectingLog final : LogSink {
  std::string out, err, both;
  void on_output(OutputStream stream, std::string_view bytes) override {
    (stream == OutputStream::out ? out : err).append(bytes);
    both.append(bytes);
  }
};

}  // namespace orc::engine::testing
