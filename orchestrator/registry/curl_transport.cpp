// The registry Transport through libcurl's easy interface, over TCP and TLS.
// Handles come from net::HandlePool (connections reused); concurrent
// requests each get their own.
#include <curl/curl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "orchestrator/net/curl.hpp"
#include "orchestrator/registry/transport.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::registry {

namespace {

// What the callbacks of one exchange share.
struct Exchange {
  const Request* request = nullptr;
  BodySink* sink = nullptr;
  Response response;
  bool started = false;  // sink->start() was called
  bool sink_stopped = false;
  bool too_large = false;
  int file_fd = -1;
  std::uint64_t file_offset = 0;
  std::uint64_t file_left = 0;
  std::string file_error;
};

// After a redirect or "100 Continue" only the last response's headers and
// body count.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  if (net::read_header_line(std::string_view(data, size * count), ex->response.status, ex->response.headers))
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
  if (ex->response.body.size() + bytes.size() > ex->request->max_body) {
    ex->too_large = true;
    return 0;
  }
  ex->response.body.append(bytes);
  return bytes.size();
}

size_t on_read(char* buffer, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const std::size_t want = std::min<std::uint64_t>(size * count, ex->file_left);
  if (want == 0) return 0;
  ssize_t n;
  do {
    n = ::pread(ex->file_fd, buffer, want, static_cast<off_t>(ex->file_offset));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    ex->file_error = n < 0 ? std::strerror(errno) : "file shorter than expected";
    return CURL_READFUNC_ABORT;
  }
  ex->file_offset += static_cast<std::uint64_t>(n);
  ex->file_left -= static_cast<std::uint64_t>(n);
  return static_cast<size_t>(n);
}

TransportErrorKind classify(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportErrorKind::connect;
    case CURLE_OPERATION_TIMEDOUT:
      return TransportErrorKind::timeout;
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      return TransportErrorKind::broken;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
      return TransportErrorKind::tls;
    default:
      return TransportErrorKind::other;
  }
}

// Body bytes of the last exchange, one way (CURLINFO_SIZE_DOWNLOAD_T or _UPLOAD_T).
std::uint64_t transferred(CURL* h, CURLINFO info) {
  curl_off_t bytes = 0;
  return curl_easy_getinfo(h, info, &bytes) == CURLE_OK && bytes > 0 ? static_cast<std::uint64_t>(bytes) : 0;
}

class CurlTransport final : public Transport {
 public:
  explicit CurlTransport(CurlOptions options) : m_options(std::move(options)) {}

  std::expected<Response, TransportError> send(const Request& request, BodySink* sink) override {
    net::CurlHandle handle = m_handles.acquire();
    auto result = perform(handle.get(), request, sink);
    m_handles.release(std::move(handle));
    return result;
  }

 private:
  std::expected<Response, TransportError> perform(CURL* h, const Request& request, BodySink* sink) {
    Exchange ex{.request = &request, .sink = sink};
    net::HeaderList headers;
    for (const auto& [name, value] : request.headers) headers.add(name + ": " + value);
    // No "100 Continue" round trip before a body; registries never need it.
    headers.add("Expect:");

    char error_buffer[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!m_options.ca_bundle.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, m_options.ca_bundle.c_str());
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(m_options.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(m_options.stall_timeout.count()));
    if (request.timeout.count() > 0)
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    // Large reads: a 1 GiB blob in 16 KiB callbacks costs measurable time.
    curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 512L * 1024);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);

    int fd = -1;
    const auto* text = std::get_if<std::string>(&request.body);
    if (request.method == "GET" || request.method == "HEAD") {
      // Blob GETs may be redirected to the storage backend. curl drops our
      // Authorization header when the host changes.
      curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
      curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
      curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
      if (request.method == "HEAD")
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
      else
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (request.method == "DELETE") {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
    } else {
      // POST, PUT, PATCH: POST's machinery with the method renamed, so a
      // string body and a file body go the same way.
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      if (request.method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      if (text) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(text->size()));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, text->data());
      } else {
        const auto& slice = std::get<FileSlice>(request.body);
        fd = ::open(slice.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
          return std::unexpected(TransportError{TransportErrorKind::file,
                                                "cannot read " + slice.path.string() + ": " + std::strerror(errno)});
        ex.file_fd = fd;
        ex.file_offset = slice.offset;
        ex.file_left = slice.size;
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(h, CURLOPT_READDATA, &ex);
        curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(slice.size));
      }
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

    const CURLcode rc = curl_easy_perform(h);
    if (fd >= 0) ::close(fd);
    if (rc == CURLE_OK && sink && ex.response.ok() && !ex.started && !start_sink(ex))
      return std::unexpected(TransportError{TransportErrorKind::aborted, "stopped by the receiver"});
    if (rc == CURLE_OK) return std::move(ex.response);

    const std::string detail = error_buffer[0] ? error_buffer : curl_easy_strerror(rc);
    if (!ex.file_error.empty()) return std::unexpected(TransportError{TransportErrorKind::file, ex.file_error});
    if (ex.sink_stopped) return std::unexpected(TransportError{TransportErrorKind::aborted, "stopped by the receiver"});
    if (ex.too_large)
      return std::unexpected(TransportError{
          TransportErrorKind::too_large, "response body larger than " + std::to_string(request.max_body) + " bytes"});
    return std::unexpected(TransportError{classify(rc), detail, transferred(h, CURLINFO_SIZE_DOWNLOAD_T),
                                          transferred(h, CURLINFO_SIZE_UPLOAD_T)});
  }

  CurlOptions m_options;
  net::HandlePool m_handles;
};

}  // namespace

std::unique_ptr<Transport> make_curl_transport(CurlOptions options) {
  return std::make_unique<CurlTransport>(std::move(options));
}

}  // namespace orc::registry
