#pragma once
// The HTTP seam of the engine module: value types for one request and its
// response, and the Transport interface that carries them. The real transport
// speaks HTTP/1.1 over the engine's unix socket through libcurl
// (http_curl.cpp); unit tests substitute a scripted one. libcurl's types never
// leave http_curl.cpp.
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

namespace orc::engine {

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

struct Request {
  std::string method = "GET";
  // Path and query, already percent-encoded: "/v1.41/containers/json?all=1".
  std::string target;
  Headers headers;
  std::variant<std::string, StreamedBody> body;
  // Limit for the whole exchange; zero means none, which followed logs, waits
  // and builds need (a build may print nothing for many minutes).
  std::chrono::milliseconds timeout{0};
  // A transfer that moves no byte for this long (whole seconds, at least
  // one) ends with TransportErrorKind::timeout; zero means never.
  std::chrono::milliseconds stall_timeout{0};
  // Polled while the request runs (at least once a second): when it becomes
  // true the transfer stops with TransportErrorKind::cancelled. Reading it
  // is all the transport does, so a signal handler may set it.
  const std::atomic<bool>* cancel = nullptr;
};

struct Response {
  int status = 0;
  Headers headers;
  // The body, unless a StreamSink took it (see Transport::send).
  std::string body;

  std::optional<std::string> header(std::string_view name) const { return find_header(headers, name); }
  bool ok() const { return status >= 200 && status < 300; }
};

// Receives a successful response's body in chunks as they arrive, for
// followed logs, build progress and tar downloads that must not be held in
// memory. Returning false stops the transfer (TransportErrorKind::aborted).
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual bool on_chunk(std::string_view bytes) = 0;
};

// A StreamSink that calls a function (which returns false to stop).
class CallbackSink final : public StreamSink {
 public:
  explicit CallbackSink(std::function<bool(std::string_view)> on_chunk) : m_on_chunk(std::move(on_chunk)) {}
  bool on_chunk(std::string_view bytes) override { return m_on_chunk(bytes); }

 private:
  std::function<bool(std::string_view)> m_on_chunk;
};

enum class TransportErrorKind {
  socket_missing,      // nothing at the socket path: the engine is not running here
  permission_denied,   // the socket (or a directory above it) refuses this user
  connection_refused,  // a socket file with nobody listening (a dead engine's leftover)
  engine_died,         // the connection closed or reset before the response was complete
  timeout,             // Request::timeout or the connect timeout ran out
  cancelled,           // Request::cancel became true
  aborted,             // the StreamSink asked to stop
  body_source,         // the BodySource failed (its message is kept)
  other,
};

struct TransportError {
  TransportErrorKind kind = TransportErrorKind::other;
  std::string message;  // the transport's detail, for example curl's error text
};

// "engine died", "socket missing", ...: the short name of a kind, for messages.
std::string_view to_string(TransportErrorKind kind);

class Transport {
 public:
  virtual ~Transport() = default;
  // Sends one request and waits for the whole response. With a sink, the
  // body of a 2xx response goes to the sink as it arrives and
  // Response::body stays empty; other statuses keep their (error) body in
  // Response::body so callers can read the engine's message. An HTTP error
  // status is a Response, not a TransportError. Safe to call from several
  // threads at once.
  virtual std::expected<Response, TransportError> send(const Request& request, StreamSink* sink = nullptr) = 0;
};

struct UnixSocketOptions {
  std::chrono::milliseconds connect_timeout{10'000};
};

// The real transport: HTTP/1.1 to the server listening on `socket`, through
// libcurl. Connections are reused between requests; concurrent requests each
// get their own connection.
std::unique_ptr<Transport> make_unix_socket_transport(std::filesystem::path socket, UnixSocketOptions options = {});

// A request body read from a file as curl asks for it, with its size; the
// file is opened at once so a missing file is reported before any request.
std::expected<StreamedBody, std::string> file_body(const std::filesystem::path& path);

// Percent-encodes a query value (RFC 3986 unreserved characters pass).
std::string url_encode(std::string_view value);

}  // namespace orc::engine
