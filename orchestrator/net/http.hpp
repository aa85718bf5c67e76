#pragma once
// The one HTTP seam (like ninja's DiskInterface): value types for one
// exchange and the Transport that carries it. The real transport is libcurl
// (curl_transport.cpp) speaking HTTP/1.1 either over a unix socket (the
// Docker and Podman API) or over TCP and TLS (OCI registries); unit tests
// script one (tests/unit/net/fake_transport.hpp). libcurl's types never
// leave net's .cpp files.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace orc::net {

// Header order is kept (and names compared case-insensitively) so a test can
// assert exactly what was sent.
using Headers = std::vector<std::pair<std::string, std::string>>;

// The value of the first header called `name` (case-insensitive), if any.
std::optional<std::string> find_header(const Headers& headers, std::string_view name);

// Fills `buffer` with the next bytes of a streamed request body and returns
// how many it wrote; 0 means the body is complete. An error string aborts the
// request (the transport reports it as TransportErrorKind::body_source).
using BodySource = std::function<std::expected<std::size_t, std::string>(std::span<char> buffer)>;

// A body streamed from a source, with its length when known (Content-Length)
// or sent with chunked transfer encoding when not.
struct StreamedBody {
  BodySource source;
  std::optional<std::uint64_t> size;
};

// A request body read from part of a file as it is sent, so a 1 GiB blob is
// never held in memory and a retry can send the same bytes again. The file
// is opened when the request is sent.
struct FileSlice {
  std::filesystem::path path;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

using Body = std::variant<std::string, FileSlice, StreamedBody>;

// Bytes a body will send: the string's, the slice's, a stream's known size
// (0 when unknown).
std::uint64_t body_size(const Body& body);

struct Request {
  std::string method = "GET";
  // Percent-encoded and never carrying credentials: an absolute URL
  // ("https://reg/v2/"), or for a transport bound to a unix socket the path
  // and query alone ("/v1.41/containers/json?all=1").
  std::string url;
  Headers headers;
  Body body;
  // Limit for the whole exchange; zero means none, which followed logs, waits
  // and builds need (a build may print nothing for many minutes).
  std::chrono::milliseconds timeout{0};
  // A transfer that moves no byte for this long (whole seconds, at least
  // one) ends with TransportErrorKind::timeout; zero takes the transport's
  // TransportOptions::stall_timeout.
  std::chrono::milliseconds stall_timeout{0};
  // Polled while the request runs (at least once a second): when it becomes
  // true the transfer stops with TransportErrorKind::cancelled. Reading it
  // is all the transport does, so a signal handler may set it.
  const std::atomic<bool>* cancel = nullptr;
  // Responses held in memory larger than this fail with
  // TransportErrorKind::too_large; unset takes TransportOptions::max_body.
  std::optional<std::size_t> max_body;
};

struct Response {
  int status = 0;
  Headers headers;
  // The body, unless a BodySink took it (see Transport::send).
  std::string body;

  std::optional<std::string> header(std::string_view name) const { return find_header(headers, name); }
  bool ok() const { return status >= 200 && status < 300; }
};

// Receives a 2xx response's body as it arrives, for followed logs, build
// progress, tar and blob downloads that must not be held in memory. start()
// sees the status and headers first (a resumed download checks
// Content-Range there); returning false from either call stops the transfer
// (TransportErrorKind::aborted).
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual bool start(const Response& /*head*/) { return true; }
  virtual bool chunk(std::string_view bytes) = 0;
};

// A BodySink that calls a function (which returns false to stop).
class CallbackSink final : public BodySink {
 public:
  explicit CallbackSink(std::function<bool(std::string_view)> on_chunk) : m_on_chunk(std::move(on_chunk)) {}
  bool chunk(std::string_view bytes) override { return m_on_chunk(bytes); }

 private:
  std::function<bool(std::string_view)> m_on_chunk;
};

enum class TransportErrorKind {
  socket_missing,      // nothing at the unix socket path: the server is not running here
  permission_denied,   // the unix socket (or a directory above it) refuses this user
  connection_refused,  // a unix socket file with nobody listening (a dead server's leftover)
  connect,             // over TCP: refused, no route, DNS; nothing answered
  tls,                 // certificate or handshake failure: never retried
  closed,              // the connection closed or reset before the response was complete
  timeout,             // Request::timeout, the stall timeout or the connect timeout ran out
  cancelled,           // Request::cancel became true
  aborted,             // the BodySink asked to stop
  body_source,         // the request body could not be read (a BodySource's or a FileSlice's error is kept)
  too_large,           // a held body passed its max_body
  other,
};

struct TransportError {
  TransportErrorKind kind = TransportErrorKind::other;
  std::string message;  // the transport's detail, for example curl's error text
  // Body bytes received and sent before it failed, for a timeout's message.
  std::uint64_t received = 0;
  std::uint64_t sent = 0;
};

// "socket missing", "connection closed", ...: the short name of a kind, for messages.
std::string_view to_string(TransportErrorKind kind);

// Whether a retry may help: connect, closed and timeout.
bool is_transient(TransportErrorKind kind);

class Transport {
 public:
  virtual ~Transport() = default;
  // Sends one request and waits for the whole response (redirects of GET
  // and HEAD followed). With a sink, the body of a 2xx response goes to the
  // sink as it arrives and Response::body stays empty; other statuses keep
  // their (error) body in Response::body so callers can read the server's
  // message. An HTTP error status is a Response, not a TransportError. Safe
  // to call from several threads at once.
  virtual std::expected<Response, TransportError> send(const Request& request, BodySink* sink = nullptr) = 0;
};

struct TransportOptions {
  // Empty: TCP, with TLS for https URLs. Otherwise every request goes to the
  // server on this socket, and Request::url is a path and query.
  std::filesystem::path unix_socket;
  // What the server on the unix socket is, in connection messages: "no
  // engine socket at ...", "the engine at ... closed the connection".
  std::string peer = "server";
  // A CA bundle to trust instead of the system's; TLS verification stays on
  // either way.
  std::filesystem::path ca_bundle;
  std::chrono::milliseconds connect_timeout{10'000};
  // For requests that set no stall_timeout; zero means never.
  std::chrono::milliseconds stall_timeout{0};
  // For requests that set no max_body; unset means no limit.
  std::optional<std::size_t> max_body;
};

// The real transport, through libcurl. Connections are reused between
// requests; concurrent requests each get their own connection.
std::unique_ptr<Transport> make_curl_transport(TransportOptions options = {});

// `inner` with `cancel` as the Request::cancel of every request that sets
// none, and no request sent once it is set (TransportErrorKind::cancelled):
// one flag, set by a signal handler or a deadline, stops every request of a
// run, whichever client made it.
std::shared_ptr<Transport> cancellable(std::shared_ptr<Transport> inner, const std::atomic<bool>* cancel);

// A request body read from a file as curl asks for it, with its size; the
// file is opened at once so a missing file is reported before any request.
std::expected<StreamedBody, std::string> file_body(const std::filesystem::path& path);

// RFC 3986 percent-encoding of a query value (unreserved characters pass).
std::string url_encode(std::string_view value);

}  // namespace orc::net
