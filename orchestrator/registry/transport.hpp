#pragma once
// The HTTP seam of the registry client (like ninja's DiskInterface): value
// types for one exchange and the Transport that carries it. The real one is
// libcurl over TCP/TLS (curl_transport.cpp); unit tests script one. libcurl's
// types never leave curl_transport.cpp.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace orc::registry {

// Order kept, names compared case-insensitively.
using Headers = std::vector<std::pair<std::string, std::string>>;

// The value of the first header called `name` (case-insensitive), if any.
std::optional<std::string> find_header(const Headers& headers, std::string_view name);

// A request body read from part of a file as it is sent, so a 1 GiB blob is
// never held in memory and a retry can send the same bytes again.
struct FileSlice {
  std::filesystem::path path;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

struct Request {
  std::string method = "GET";
  std::string url;  // absolute, percent-encoded; never carries credentials
  Headers headers;
  std::variant<std::string, FileSlice> body;
  // Limit for the whole exchange; zero means none. The Client gives each
  // request what is left of its operation's deadline (deadline.hpp).
  std::chrono::milliseconds timeout{0};
  // Responses held in memory (manifests, tag lists, errors) larger than this
  // fail with TransportErrorKind::too_large: a registry is untrusted.
  std::size_t max_body = 4 << 20;
};

struct Response {
  int status = 0;
  Headers headers;
  std::string body;  // unless a BodySink took it

  std::optional<std::string> header(std::string_view name) const { return find_header(headers, name); }
  bool ok() const { return status >= 200 && status < 300; }
};

// Receives a 2xx response's body as it arrives. start() sees the status and
// headers first (a resumed download checks Content-Range there); returning
// false from either call stops the transfer (TransportErrorKind::aborted).
// Bodies of other statuses stay in Response::body for the error message.
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual bool start(const Response& head) = 0;
  virtual bool chunk(std::string_view bytes) = 0;
};

enum class TransportErrorKind {
  connect,    // refused, no route, DNS: nothing answered
  timeout,    // the exchange or a stalled transfer ran out of time
  broken,     // the connection closed or reset mid-exchange
  tls,        // certificate or handshake failure: never retried
  too_large,  // a held body passed Request::max_body
  aborted,    // the BodySink stopped the transfer
  file,       // the FileSlice could not be read
  other,
};

struct TransportError {
  TransportErrorKind kind = TransportErrorKind::other;
  std::string message;  // the transport's detail (curl's error text)
  // Body bytes received and sent before it failed, for a timeout's message.
  std::uint64_t received = 0;
  std::uint64_t sent = 0;
};

// Whether a retry may help: connect, timeout, broken.
bool is_transient(TransportErrorKind kind);

class Transport {
 public:
  virtual ~Transport() = default;
  // One request, one response (redirects of GET/HEAD followed). An HTTP
  // error status is a Response, not a TransportError.
  virtual std::expected<Response, TransportError> send(const Request& request, BodySink* sink = nullptr) = 0;
};

struct CurlOptions {
  // A CA bundle to trust instead of the system's; TLS verification stays on
  // either way.
  std::filesystem::path ca_bundle;
  std::chrono::milliseconds connect_timeout{10'000};
  // A transfer that moves no byte for this long is a broken one.
  std::chrono::seconds stall_timeout{30};
};

std::unique_ptr<Transport> make_curl_transport(CurlOptions options = {});

// RFC 3986 percent-encoding of a query value (unreserved characters pass).
std::string url_encode(std::string_view value);

}  // namespace orc::registry
