// The curl transport against a minimal HTTP server on a unix socket in this
// process: what goes on the wire, and how each way a connection can fail
// maps to a TransportErrorKind.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "orchestrator/engine/http.hpp"

namespace orc::engine {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

int listening_socket(const fs::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 4) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads one request: the head, then a Content-Length body or a chunked one
// (up to its last chunk).
std::string read_request(int fd) {
  std::string in;
  char buffer[4096];
  for (;;) {
    const auto head_end = in.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const std::string head = in.substr(0, head_end);
      if (head.find("Transfer-Encoding: chunked") != std::string::npos) {
        if (in.find("\r\n0\r\n\r\n", head_end) != std::string::npos) return in;
      } else if (const auto cl = head.find("Content-Length: "); cl != std::string::npos) {
        if (in.size() >= head_end + 4 + std::stoul(head.substr(cl + 16))) return in;
      } else {
        return in;
      }
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) return in;
    in.append(buffer, static_cast<std::size_t>(n));
  }
}

// Serves one connection with `handler(fd, request)` on its own thread.
class Server {
 public:
  Server(const fs::path& path, std::function<void(int, const std::string&)> handler) : m_fd(listening_socket(path)) {
    m_thread = std::thread([this, handler] {
      const int client = ::accept(m_fd, nullptr, nullptr);
      if (client < 0) return;
      handler(client, read_request(client));
      ::close(client);
    });
  }
  ~Server() {
    ::shutdown(m_fd, SHUT_RDWR);
    m_thread.join();
    ::close(m_fd);
  }
  bool ok() const { return m_fd >= 0; }

 private:
  int m_fd;
  std::thread m_thread;
};

// Holds the connection open until the client closes it (or `quiet_ms` of
// silence pass): how a quiet engine looks to curl.
void wait_for_close(int fd, int quiet_ms = 5000) {
  pollfd p{.fd = fd, .events = POLLIN};
  char buffer[256];
  while (::poll(&p, 1, quiet_ms) == 1 && ::read(fd, buffer, sizeof buffer) > 0) {
  }
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

class CurlTransport : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: sun_path holds 108 bytes.
    m_dir = fs::path("/tmp") / ("orc-http-" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
    m_socket = m_dir / "s.sock";
  }
  void TearDown() override {
    fs::permissions(m_dir, fs::perms::owner_all);
    fs::remove_all(m_dir);
  }

  fs::path m_dir;
  fs::path m_socket;
};

struct Collect final : StreamSink {
  std::string got;
  bool on_chunk(std::string_view bytes) override {
    got.append(bytes);
    return true;
  }
};

TEST_F(CurlTransport, SendsTheRequestAndReadsTheResponse) {
  std::string seen;
  Server server(m_socket, [&](int fd, const std::string& request) {
    seen = request;
    write_all(fd, "HTTP/1.1 201 Created\r\nApi-Version: 1.41\r\nContent-Length: 11\r\n\r\n{\"Id\":\"c\"}\n");
  });
  ASSERT_TRUE(server.ok());
  auto transport = make_unix_socket_transport(m_socket);
  auto response = transport->send(Request{.method = "POST",
                                          .target = "/v1.41/containers/create?name=x",
                                          .headers = {{"Content-Type", "application/json"}},
                                          .body = std::string("{\"Image\":\"i\"}")});
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->header("api-version"), "1.41");
  EXPECT_EQ(response->body, "{\"Id\":\"c\"}\n");
  EXPECT_TRUE(seen.starts_with("POST /v1.41/containers/create?name=x HTTP/1.1\r\n")) << seen;
  EXPECT_NE(seen.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_EQ(seen.find("Expect:"), std::string::npos);
  EXPECT_TRUE(seen.ends_with("\r\n\r\n{\"Image\":\"i\"}"));
}

TEST_F(CurlTransport, StreamsABodyOfUnknownLengthChunked) {
  std::string seen;
  Server server(m_socket, [&](int fd, const std::string& request) {
    seen = request;
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  });
  int calls = 0;
  StreamedBody body{.source = [&](std::span<char> buffer) -> std::expected<std::size_t, std::string> {
    if (calls++ == 3) return 0;
    buffer[0] = 'a';
    buffer[1] = 'b';
    return 2;
  }};
  auto response = make_unix_socket_transport(m_socket)->send(Request{.method = "POST", .target = "/x", .body = body});
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_NE(seen.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_NE(seen.find("ab"), std::string::npos);
  EXPECT_TRUE(seen.ends_with("0\r\n\r\n"));
}

TEST_F(CurlTransport, SinkGetsSuccessBodiesOnlyAndErrorsStayReadable) {
  Server server(m_socket, [&](int fd, const std::string&) {
    write_all(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 27\r\n\r\n{\"message\":\"No such image\"}");
  });
  Collect sink;
  auto response = make_unix_socket_transport(m_socket)->send(Request{.target = "/images/x/json"}, &sink);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(response->body, "{\"message\":\"No such image\"}");
  EXPECT_EQ(sink.got, "");
}

TEST_F(CurlTransport, MissingSocket) {
  auto response = make_unix_socket_transport(m_dir / "absent.sock")->send(Request{.target = "/_ping"});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::socket_missing);
  EXPECT_EQ(response.error().message, "no engine socket at " + (m_dir / "absent.sock").string());
}

// A dead engine leaves its socket file behind; connecting is refused.
TEST_F(CurlTransport, LeftoverSocketIsConnectionRefused) {
  ::close(listening_socket(m_socket));
  auto response = make_unix_socket_transport(m_socket)->send(Request{.target = "/_ping"});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::connection_refused);
}

// Root passes every permission check, so the connecting thread takes a
// non-root file-system UID (per thread on Linux) for the attempt.
TEST_F(CurlTransport, PermissionDenied) {
  const int fd = listening_socket(m_socket);
  ASSERT_GE(fd, 0);
  fs::permissions(m_dir, fs::perms::none);
  std::expected<Response, TransportError> response;
  std::thread attempt([&] {
    const bool root = ::geteuid() == 0;
    if (root) ::setfsuid(65534);
    response = make_unix_socket_transport(m_socket)->send(Request{.target = "/_ping"});
    if (root) ::setfsuid(0);
  });
  attempt.join();
  ::close(fd);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::permission_denied);
  EXPECT_EQ(response.error().message, m_socket.string() + ": permission denied");
}

TEST_F(CurlTransport, ConnectionClosedMidStreamIsEngineDied) {
  Server server(m_socket, [&](int fd, const std::string&) {
    write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
  });
  Collect sink;
  auto response = make_unix_socket_transport(m_socket)->send(Request{.target = "/logs?follow=1"}, &sink);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::engine_died);
  EXPECT_EQ(sink.got, "hello");
}

TEST_F(CurlTransport, ClosedBeforeAnyAnswerIsEngineDied) {
  Server server(m_socket, [&](int, const std::string&) {});
  auto response = make_unix_socket_transport(m_socket)->send(Request{.target = "/_ping"});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::engine_died);
}

TEST_F(CurlTransport, Timeout) {
  Server server(m_socket, [&](int fd, const std::string&) { wait_for_close(fd); });
  auto response = make_unix_socket_transport(m_socket)->send(Request{.target = "/_ping", .timeout = 300ms});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::timeout);
}

// A transfer that goes silent ends after its stall timeout (curl's speed
// check: a few seconds here), not when the peer lets go (this server holds
// on for 30 s of silence, then closes: engine_died).
TEST_F(CurlTransport, StallTimeoutEndsASilentTransfer) {
  Server server(m_socket, [&](int fd, const std::string&) {
    write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
    wait_for_close(fd, 30'000);
  });
  Collect sink;
  auto response =
      make_unix_socket_transport(m_socket)->send(Request{.target = "/archive", .stall_timeout = 1000ms}, &sink);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::timeout);
  EXPECT_EQ(sink.got, "abc");
}

TEST_F(CurlTransport, CancelFlagStopsAQuietStream) {
  Server server(m_socket, [&](int fd, const std::string&) {
    write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
    wait_for_close(fd);
  });
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    cancel = true;
  });
  Collect sink;
  const auto start = std::chrono::steady_clock::now();
  auto response = make_unix_socket_transport(m_socket)->send(Request{.target = "/logs", .cancel = &cancel}, &sink);
  canceller.join();
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2500ms);
  EXPECT_EQ(sink.got, "abc");
}

TEST(Http, UrlEncodeAndHeaders) {
  EXPECT_EQ(url_encode("orc/base:1"), "orc%2Fbase%3A1");
  EXPECT_EQ(url_encode(R"({"label":["a=b"]})"), "%7B%22label%22%3A%5B%22a%3Db%22%5D%7D");
  EXPECT_EQ(url_encode("A-z_0.9~"), "A-z_0.9~");
  const Headers headers{{"Content-Type", "application/x-tar"}};
  EXPECT_EQ(find_header(headers, "CONTENT-TYPE"), "application/x-tar");
  EXPECT_EQ(find_header(headers, "Content-Length"), std::nullopt);
}

}  // namespace
}  // namespace orc::engine
