// The libcurl transport against minimal HTTP servers in this process, on a
// unix socket (the engine's API) and on loopback TCP (registries): what goes
// on the wire, and how each way a connection can fail maps to a
// TransportErrorKind.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "orchestrator/net/http.hpp"

namespace orc::net {
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

// A socket listening on 127.0.0.1 at a port the kernel picks; `port` is set.
int listening_tcp(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 4) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
    ::close(fd);
    return -1;
  }
  port = ntohs(addr.sin_port);
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

// Serves `connections` connections one after another on its own thread,
// each with `handler(fd, request)`; with `read` false the handler is called
// before anything is read (the request is empty).
class Server {
 public:
  using Handler = std::function<void(int, const std::string&)>;
  Server(const fs::path& path, Handler handler) : Server(listening_socket(path), std::move(handler)) {}
  Server(int listening_fd, Handler handler, int connections = 1, bool read = true) : m_fd(listening_fd) {
    m_thread = std::thread([this, handler, connections, read] {
      for (int i = 0; i < connections; ++i) {
        const int client = ::accept(m_fd, nullptr, nullptr);
        if (client < 0) return;
        handler(client, read ? read_request(client) : std::string());
        ::close(client);
      }
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

// The transport as the engine module makes it: bound to a socket, its
// connection messages naming the engine.
std::unique_ptr<Transport> make_unix_socket_transport(const fs::path& socket) {
  return make_curl_transport({.unix_socket = socket, .peer = "engine"});
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

struct Collect final : BodySink {
  std::string got;
  bool chunk(std::string_view bytes) override {
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
                                          .url = "/v1.41/containers/create?name=x",
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
  auto response = make_unix_socket_transport(m_socket)->send(Request{.method = "POST", .url = "/x", .body = body});
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
  auto response = make_unix_socket_transport(m_socket)->send(Request{.url = "/images/x/json"}, &sink);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(response->body, "{\"message\":\"No such image\"}");
  EXPECT_EQ(sink.got, "");
}

TEST_F(CurlTransport, MissingSocket) {
  auto response = make_unix_socket_transport(m_dir / "absent.sock")->send(Request{.url = "/_ping"});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::socket_missing);
  EXPECT_EQ(response.error().message, "no engine socket at " + (m_dir / "absent.sock").string());
}

// A dead engine leaves its socket file behind; connecting is refused.
TEST_F(CurlTransport, LeftoverSocketIsConnectionRefused) {
  ::close(listening_socket(m_socket));
  auto response = make_unix_socket_transport(m_socket)->send(Request{.url = "/_ping"});
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
    response = make_unix_socket_transport(m_socket)->send(Request{.url = "/_ping"});
    if (root) ::setfsuid(0);
  });
  attempt.join();
  ::close(fd);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::permission_denied);
  EXPECT_EQ(response.error().message, m_socket.string() + ": permission denied");
}

TEST_F(CurlTransport, ConnectionClosedMidStreamIsClosed) {
  Server server(m_socket, [&](int fd, const std::string&) {
    write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
  });
  Collect sink;
  auto response = make_unix_socket_transport(m_socket)->send(Request{.url = "/logs?follow=1"}, &sink);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::closed);
  EXPECT_EQ(sink.got, "hello");
}

TEST_F(CurlTransport, ClosedBeforeAnyAnswerIsClosed) {
  Server server(m_socket, [&](int, const std::string&) {});
  auto response = make_unix_socket_transport(m_socket)->send(Request{.url = "/_ping"});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::closed);
}

TEST_F(CurlTransport, Timeout) {
  Server server(m_socket, [&](int fd, const std::string&) { wait_for_close(fd); });
  auto response = make_unix_socket_transport(m_socket)->send(Request{.url = "/_ping", .timeout = 300ms});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::timeout);
}

// A transfer that goes silent ends after its stall timeout (curl's speed
// check: a few seconds here), not when the peer lets go (this server holds
// on for 30 s of silence, then closes: closed).
TEST_F(CurlTransport, StallTimeoutEndsASilentTransfer) {
  Server server(m_socket, [&](int fd, const std::string&) {
    write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
    wait_for_close(fd, 30'000);
  });
  Collect sink;
  auto response =
      make_unix_socket_transport(m_socket)->send(Request{.url = "/archive", .stall_timeout = 1000ms}, &sink);
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
  auto response = make_unix_socket_transport(m_socket)->send(Request{.url = "/logs", .cancel = &cancel}, &sink);
  canceller.join();
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2500ms);
  EXPECT_EQ(sink.got, "abc");
}

TEST_F(CurlTransport, ABodySourceErrorEndsTheRequestWithItsMessage) {
  Server server(m_socket, [&](int fd, const std::string&) { wait_for_close(fd); });
  StreamedBody body{.source = [](std::span<char>) -> std::expected<std::size_t, std::string> {
    return std::unexpected("reading ctx.tar: Input/output error");
  }};
  auto response = make_unix_socket_transport(m_socket)->send(Request{.method = "POST", .url = "/build", .body = body});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::body_source);
  EXPECT_EQ(response.error().message, "reading ctx.tar: Input/output error");
}

// The same transport over loopback TCP, as the registry client uses it.
class CurlTcpTransport : public ::testing::Test {
 protected:
  void SetUp() override {
    m_listening = listening_tcp(m_port);
    ASSERT_GE(m_listening, 0);
  }
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(m_port) + std::string(path);
  }

  int m_listening = -1;
  int m_port = 0;
};

TEST_F(CurlTcpTransport, SendsAFileSliceWithItsLength) {
  const fs::path file = fs::path(::testing::TempDir()) / ("orc-slice-" + std::to_string(::getpid()));
  std::ofstream(file) << "0123456789";
  std::string seen;
  Server server(m_listening, [&](int fd, const std::string& request) {
    seen = request;
    write_all(fd, "HTTP/1.1 202 Accepted\r\nRange: 0-4\r\nContent-Length: 0\r\n\r\n");
  });
  auto response = make_curl_transport()->send(
      Request{.method = "PATCH", .url = url("/v2/r/blobs/uploads/u"), .body = FileSlice{file, 3, 5}});
  fs::remove(file);
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 202);
  EXPECT_TRUE(seen.starts_with("PATCH /v2/r/blobs/uploads/u HTTP/1.1\r\n")) << seen;
  EXPECT_NE(seen.find("Content-Length: 5\r\n"), std::string::npos) << seen;
  EXPECT_TRUE(seen.ends_with("\r\n\r\n34567")) << seen;
}

TEST_F(CurlTcpTransport, AMissingFileSliceFailsBeforeAnyRequest) {
  auto response = make_curl_transport()->send(
      Request{.method = "PUT", .url = url("/x"), .body = FileSlice{"/nonexistent/blob", 0, 5}});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::body_source);
  EXPECT_EQ(response.error().message, "cannot read /nonexistent/blob: No such file or directory");
}

// A blob GET redirected to its storage backend: only the last response counts.
TEST_F(CurlTcpTransport, FollowsARedirectOfAGet) {
  std::vector<std::string> seen;
  Server server(
      m_listening,
      [&](int fd, const std::string& request) {
        seen.push_back(request.substr(0, request.find("\r\n")));
        if (seen.size() == 1)
          write_all(fd,
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: /storage/b\r\nContent-Length: 5\r\n"
                    "Connection: close\r\n\r\nmoved");
        else
          write_all(fd, "HTTP/1.1 200 OK\r\nX-Backend: 1\r\nContent-Length: 4\r\n\r\nblob");
      },
      2);
  auto response = make_curl_transport()->send(Request{.url = url("/v2/r/blobs/sha256:ab")});
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "blob");
  EXPECT_EQ(response->header("x-backend"), "1");
  EXPECT_EQ(response->header("Location"), std::nullopt);
  EXPECT_EQ(seen, (std::vector<std::string>{"GET /v2/r/blobs/sha256:ab HTTP/1.1", "GET /storage/b HTTP/1.1"}));
}

TEST_F(CurlTcpTransport, AHeldBodyOverItsLimitIsTooLarge) {
  Server server(
      m_listening,
      [&](int fd, const std::string&) {
        write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n01234567890123456789");
      },
      2);
  // The transport's default, then a request's own limit over it.
  auto transport = make_curl_transport({.max_body = 10});
  auto held = transport->send(Request{.url = url("/v2/r/manifests/a")});
  ASSERT_FALSE(held);
  EXPECT_EQ(held.error().kind, TransportErrorKind::too_large);
  EXPECT_EQ(held.error().message, "response body larger than 10 bytes");
  auto allowed = transport->send(Request{.url = url("/v2/r/manifests/a"), .max_body = 20});
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_EQ(allowed->body, "01234567890123456789");
}

// A resumed download reads Content-Range in start(), before any body byte;
// refusing there stops the transfer.
TEST_F(CurlTcpTransport, TheSinkSeesTheHeadFirstAndMayRefuseIt) {
  struct Resume final : BodySink {
    int status = 0;
    std::string range, got;
    bool accept = true;
    bool start(const Response& head) override {
      status = head.status;
      range = head.header("Content-Range").value_or("");
      return accept;
    }
    bool chunk(std::string_view bytes) override {
      got.append(bytes);
      return true;
    }
  };
  const std::string answer =
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789";
  Server server(
      m_listening, [&](int fd, const std::string&) { write_all(fd, answer); }, 2);
  auto transport = make_curl_transport();
  Resume taken;
  ASSERT_TRUE(transport->send(Request{.url = url("/b"), .headers = {{"Range", "bytes=5-"}}}, &taken));
  EXPECT_EQ(taken.status, 206);
  EXPECT_EQ(taken.range, "bytes 5-9/10");
  EXPECT_EQ(taken.got, "56789");
  Resume refused;
  refused.accept = false;
  auto response = transport->send(Request{.url = url("/b")}, &refused);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::aborted);
  EXPECT_EQ(refused.got, "");
}

// A connection cut mid-body says how many bytes came, for a timeout's or a
// retry's message.
TEST_F(CurlTcpTransport, ABrokenConnectionCountsWhatCame) {
  Server server(m_listening, [&](int fd, const std::string&) {
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
  });
  auto response = make_curl_transport()->send(Request{.url = url("/b")});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::closed);
  EXPECT_EQ(response.error().received, 10u);
  EXPECT_TRUE(is_transient(response.error().kind));
}

TEST_F(CurlTcpTransport, NobodyListeningIsATransientConnectFailure) {
  ::close(m_listening);
  m_listening = -1;
  auto response = make_curl_transport()->send(Request{.url = url("/v2/")});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::connect);
  EXPECT_TRUE(is_transient(response.error().kind));
}

// TLS to a server that answers in plain HTTP fails the handshake: tls, never
// retried.
TEST_F(CurlTcpTransport, AFailedHandshakeIsTls) {
  Server server(
      m_listening, [&](int fd, const std::string&) { write_all(fd, "HTTP/1.1 400 Bad Request\r\n\r\n"); }, 1, false);
  auto response = make_curl_transport()->send(Request{.url = "https://127.0.0.1:" + std::to_string(m_port) + "/v2/"});
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, TransportErrorKind::tls) << response.error().message;
  EXPECT_FALSE(is_transient(response.error().kind));
}

TEST(Http, BodySizeAndKindNames) {
  EXPECT_EQ(body_size(std::string("abc")), 3u);
  EXPECT_EQ(body_size(FileSlice{"f", 10, 7}), 7u);
  EXPECT_EQ(body_size(StreamedBody{.size = 9}), 9u);
  EXPECT_EQ(body_size(StreamedBody{}), 0u);
  EXPECT_EQ(to_string(TransportErrorKind::closed), "connection closed");
  EXPECT_EQ(to_string(TransportErrorKind::socket_missing), "socket missing");
  EXPECT_FALSE(is_transient(TransportErrorKind::too_large));
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
}  // namespace orc::net
