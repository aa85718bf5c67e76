// The Transport through libcurl's easy interface, over a unix socket (the
// container engine's API) or TCP and TLS (registries). One easy handle
// serves one request at a time, from HandlePool (connections reused; a
// request arriving while every handle is busy, a followed log stream plus a
// kill from another thread, gets a new one).
#include <curl/curl.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "orchestrator/net/curl.hpp"
#include "orchestrator/net/http.hpp"

namespace orc::net {

namespace {

// What the callbacks of one exchange share.
struct Exchange {
  const Request* request = nullptr;
  BodySink* sink = nullptr;
  std::optional<std::size_t> max_body;
  Response response;
  bool started = false;  // sink->start() was called
  bool sink_stopped = false;
  bool too_large = false;
  // The request body's reader: a BodySource, or a FileSlice's descriptor.
  const BodySource* source = nullptr;
  int file_fd = -1;
  std::uint64_t file_offset = 0;
  std::uint64_t file_left = 0;
  std::string body_error;
};

// Header lines arrive one per call; after a redirect or "100 Continue" only
// the last response's headers and body count.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  if (read_header_line(std::string_view(data, size * count), ex->response.status, ex->response.headers))
    ex->response.body.clear();
  return size * count;
}

bool start_sink(Exchange& ex) {
  ex.started = true;
  if (!ex.sink->start(ex.response)) {
    ex.sink_stopped = true;
    return false;
  }
  return true;
}

size_t on_write(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const std::string_view bytes(data, size * count);
  if (ex->sink && ex->response.ok()) {
    if (!ex->started && !start_sink(*ex)) return 0;
    if (!ex->sink->chunk(bytes)) {
      ex->sink_stopped = true;
      return 0;  // anything but the full count stops curl with CURLE_WRITE_ERROR
    }
    return bytes.size();
  }
  if (ex->max_body && ex->response.body.size() + bytes.size() > *ex->max_body) {
    ex->too_large = true;
    return 0;
  }
  ex->response.body.append(bytes);
  return bytes.size();
}

size_t on_read_source(char* buffer, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  auto n = (*ex->source)(std::span<char>(buffer, size * count));
  if (!n) {
    ex->body_error = std::move(n.error());
    return CURL_READFUNC_ABORT;
  }
  return *n;
}

size_t on_read_file(char* buffer, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const std::size_t want = std::min<std::uint64_t>(size * count, ex->file_left);
  if (want == 0) return 0;
  ssize_t n;
  do {
    n = ::pread(ex->file_fd, buffer, want, static_cast<off_t>(ex->file_offset));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    ex->body_error = n < 0 ? std::strerror(errno) : "file shorter than expected";
    return CURL_READFUNC_ABORT;
  }
  ex->file_offset += static_cast<std::uint64_t>(n);
  ex->file_left -= static_cast<std::uint64_t>(n);
  return static_cast<size_t>(n);
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* ex = static_cast<const Exchange*>(user);
  return ex->request->cancel && ex->request->cancel->load() ? 1 : 0;
}

bool is_tls_error(CURLcode rc) {
  return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_SSL_CACERT_BADFILE ||
         rc == CURLE_SSL_CERTPROBLEM;
}

// Body bytes of the last exchange, one way (CURLINFO_SIZE_DOWNLOAD_T or _UPLOAD_T).
std::uint64_t transferred(CURL* h, CURLINFO info) {
  curl_off_t bytes = 0;
  return curl_easy_getinfo(h, info, &bytes) == CURLE_OK && bytes > 0 ? static_cast<std::uint64_t>(bytes) : 0;
}

// Owns a FileSlice's descriptor for one exchange.
struct FileGuard {
  int fd = -1;
  ~FileGuard() {
    if (fd >= 0) ::close(fd);
  }
};

class CurlTransport final : public Transport {
 public:
  explicit CurlTransport(TransportOptions options) : m_options(std::move(options)) {}

  std::expected<Response, TransportError> send(const Request& request, BodySink* sink) override {
    CurlHandle handle = m_handles.acquire();
    auto result = perform(handle.get(), request, sink);
    m_handles.release(std::move(handle));
    return result;
  }

 private:
  std::expected<Response, TransportError> perform(CURL* h, const Request& request, BodySink* sink) {
    Exchange ex{
        .request = &request, .sink = sink, .max_body = request.max_body ? request.max_body : m_options.max_body};
    HeaderList headers;
    for (const auto& [name, value] : request.headers) headers.add(name + ": " + value);
    // curl would otherwise wait up to a second for "100 Continue" before
    // sending a large body; neither engines nor registries need it.
    headers.add("Expect:");

    char error_buffer[CURL_ERROR_SIZE] = {};
    const std::string url =
        unix_mode() && request.url.starts_with('/') ? "http://localhost" + request.url : request.url;
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    set_connection(h);
    set_limits(h, request);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
    if (request.cancel) {
      curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
      curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
      curl_easy_setopt(h, CURLOPT_XFERINFODATA, &ex);
    }
    FileGuard file;
    if (auto failed = set_method_and_body(h, request, ex, headers, file)) return std::unexpected(std::move(*failed));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

    const CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK && sink && ex.response.ok() && !ex.started && !start_sink(ex))
      return std::unexpected(TransportError{TransportErrorKind::aborted, "stopped by the receiver"});
    if (rc == CURLE_OK) return std::move(ex.response);
    TransportError error = map_error(h, rc, ex, error_buffer[0] ? error_buffer : curl_easy_strerror(rc));
    error.received = transferred(h, CURLINFO_SIZE_DOWNLOAD_T);
    error.sent = transferred(h, CURLINFO_SIZE_UPLOAD_T);
    return std::unexpected(std::move(error));
  }

  bool unix_mode() const { return !m_options.unix_socket.empty(); }

  void set_connection(CURL* h) const {
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // threads; a signal must not longjmp out of curl
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (unix_mode()) curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, m_options.unix_socket.c_str());
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!m_options.ca_bundle.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, m_options.ca_bundle.c_str());
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(m_options.connect_timeout.count()));
    // Large reads: a 1 GiB blob in 16 KiB callbacks costs measurable time.
    curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 512L * 1024);
  }

  void set_limits(CURL* h, const Request& request) const {
    if (request.timeout.count() > 0)
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    const auto stall = request.stall_timeout.count() > 0 ? request.stall_timeout : m_options.stall_timeout;
    if (stall.count() > 0) {
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, std::max(1L, static_cast<long>(stall.count() / 1000)));
    }
  }

  // GET and HEAD follow redirects (a registry's blob may live on a storage
  // backend; curl drops our Authorization header when the host changes). A
  // method with a body, and POST, PUT and PATCH, go through POST's machinery
  // with the method renamed, so every kind of body goes the same way.
  std::optional<TransportError> set_method_and_body(CURL* h, const Request& request, Exchange& ex, HeaderList& headers,
                                                    FileGuard& file) const {
    const auto& method = request.method;
    const auto* text = std::get_if<std::string>(&request.body);
    if (method == "GET" || method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
      curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
      curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
      curl_easy_setopt(h, method == "HEAD" ? CURLOPT_NOBODY : CURLOPT_HTTPGET, 1L);
      return std::nullopt;
    }
    if (text && text->empty() && method != "POST" && method != "PUT" && method != "PATCH") {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
      return std::nullopt;
    }
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    if (method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
    if (text) {
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(text->size()));
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, text->data());
      return std::nullopt;
    }
    curl_easy_setopt(h, CURLOPT_READDATA, &ex);
    curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
    if (const auto* slice = std::get_if<FileSlice>(&request.body)) {
      file.fd = ::open(slice->path.c_str(), O_RDONLY | O_CLOEXEC);
      if (file.fd < 0)
        return TransportError{TransportErrorKind::body_source,
                              "cannot read " + slice->path.string() + ": " + std::strerror(errno)};
      ex.file_fd = file.fd;
      ex.file_offset = slice->offset;
      ex.file_left = slice->size;
      curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read_file);
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(slice->size));
      return std::nullopt;
    }
    const auto& streamed = std::get<StreamedBody>(request.body);
    ex.source = &streamed.source;
    curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read_source);
    if (streamed.size)
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(*streamed.size));
    else
      headers.add("Transfer-Encoding: chunked");
    return std::nullopt;
  }

  TransportError map_error(CURL* h, CURLcode rc, const Exchange& ex, const char* detail) const {
    if (!ex.body_error.empty()) return {TransportErrorKind::body_source, ex.body_error};
    if (ex.sink_stopped) return {TransportErrorKind::aborted, "stopped by the receiver"};
    if (ex.too_large)
      return {TransportErrorKind::too_large, "response body larger than " + std::to_string(*ex.max_body) + " bytes"};
    switch (rc) {
      case CURLE_COULDNT_CONNECT:
        if (unix_mode()) {
          long os_errno = 0;
          curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
          return socket_error(os_errno, detail);
        }
        return {TransportErrorKind::connect, detail};
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
        return {TransportErrorKind::connect, detail};
      case CURLE_OPERATION_TIMEDOUT:
        if (unix_mode())
          return {TransportErrorKind::timeout,
                  "no complete answer from " + m_options.unix_socket.string() + " in time (" + detail + ")"};
        return {TransportErrorKind::timeout, detail};
      case CURLE_ABORTED_BY_CALLBACK:
        return {TransportErrorKind::cancelled, "cancelled"};
      // The server closed or reset the connection before the response
      // ended: killed, crashed, or restarted under us.
      case CURLE_GOT_NOTHING:
      case CURLE_PARTIAL_FILE:
      case CURLE_RECV_ERROR:
      case CURLE_SEND_ERROR:
        if (unix_mode())
          return {TransportErrorKind::closed, "the " + m_options.peer + " at " + m_options.unix_socket.string() +
                                                  " closed the connection mid-response (" + detail + ")"};
        return {TransportErrorKind::closed, detail};
      default:
        if (is_tls_error(rc)) return {TransportErrorKind::tls, detail};
        return {TransportErrorKind::other, detail};
    }
  }

  // Why connecting to the unix socket failed, from the OS's errno.
  TransportError socket_error(long os_errno, const char* detail) const {
    const std::string where = m_options.unix_socket.string();
    switch (os_errno) {
      case ENOENT:
      case ENOTDIR:
        return {TransportErrorKind::socket_missing, "no " + m_options.peer + " socket at " + where};
      case EACCES:
      case EPERM:
        return {TransportErrorKind::permission_denied, where + ": permission denied"};
      case ECONNREFUSED:
        return {TransportErrorKind::connection_refused, "nothing is listening on " + where + " (connection refused)"};
      default:
        return {TransportErrorKind::other, "cannot connect to " + where + ": " + detail};
    }
  }

  TransportOptions m_options;
  HandlePool m_handles;
};

}  // namespace

std::unique_ptr<Transport> make_curl_transport(TransportOptions options) {
  return std::make_unique<CurlTransport>(std::move(options));
}

}  // namespace orc::net
