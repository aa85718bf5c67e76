// The unix-socket Transport through libcurl's easy interface. One easy handle
// serves one request at a time, from net::HandlePool (connections reused; a
// request arriving while every handle is busy, a followed log stream plus a
// kill from another thread, gets a new one).
#include <curl/curl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "orchestrator/engine/http.hpp"
#include "orchestrator/net/curl.hpp"

namespace orc::engine {

namespace {

// What the callbacks of one exchange share.
struct Exchange {
  const Request* request = nullptr;
  StreamSink* sink = nullptr;
  Response response;
  const BodySource* source = nullptr;
  std::string source_error;
  bool sink_stopped = false;
};

// Header lines arrive one per call; after "100 Continue" the real response
// follows, and only its headers count.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  net::read_header_line(std::string_view(data, size * count), ex->response.status, ex->response.headers);
  return size * count;
}

size_t on_write(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const std::string_view bytes(data, size * count);
  if (ex->sink && ex->response.ok()) {
    if (!ex->sink->on_chunk(bytes)) {
      ex->sink_stopped = true;
      return 0;  // anything but `count` makes curl stop with CURLE_WRITE_ERROR
    }
  } else {
    ex->response.body.append(bytes);
  }
  return bytes.size();
}

size_t on_read(char* buffer, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  auto n = (*ex->source)(std::span<char>(buffer, size * count));
  if (!n) {
    ex->source_error = std::move(n.error());
    return CURL_READFUNC_ABORT;
  }
  return *n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* ex = static_cast<const Exchange*>(user);
  return ex->request->cancel && ex->request->cancel->load() ? 1 : 0;
}

TransportError connect_error(long os_errno, const std::filesystem::path& socket, const char* detail) {
  const std::string where = socket.string();
  switch (os_errno) {
    case ENOENT:
    case ENOTDIR:
      return {TransportErrorKind::socket_missing, "no engine socket at " + where};
    case EACCES:
    case EPERM:
      return {TransportErrorKind::permission_denied, where + ": permission denied"};
    case ECONNREFUSED:
      return {TransportErrorKind::connection_refused, "nothing is listening on " + where + " (connection refused)"};
    default:
      return {TransportErrorKind::other, "cannot connect to " + where + ": " + detail};
  }
}

class UnixSocketTransport final : public Transport {
 public:
  UnixSocketTransport(std::filesystem::path socket, UnixSocketOptions options)
      : m_socket(std::move(socket)), m_options(options) {}

  std::expected<Response, TransportError> send(const Request& request, StreamSink* sink) override {
    net::CurlHandle handle = m_handles.acquire();
    auto result = perform(handle.get(), request, sink);
    m_handles.release(std::move(handle));
    return result;
  }

 private:
  std::expected<Response, TransportError> perform(CURL* h, const Request& request, StreamSink* sink) {
    Exchange ex{.request = &request, .sink = sink};
    net::HeaderList headers;
    for (const auto& [name, value] : request.headers) headers.add(name + ": " + value);
    // curl would otherwise wait up to a second for "100 Continue" before
    // sending a large body; the engine never needs the handshake.
    headers.add("Expect:");

    const std::string url = "http://localhost" + request.target;
    char error_buffer[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, m_socket.c_str());
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // threads; a signal must not longjmp out of curl
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(m_options.connect_timeout.count()));
    if (request.timeout.count() > 0)
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    if (request.stall_timeout.count() > 0) {
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
                       std::max(1L, static_cast<long>(request.stall_timeout.count() / 1000)));
    }
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &ex);

    if (const auto* text = std::get_if<std::string>(&request.body); text && text->empty() && request.method != "POST") {
      if (request.method == "GET") {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
      } else if (request.method == "HEAD") {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
      } else {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      }
    } else {
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      if (request.method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      if (text) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(text->size()));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, text->data());
      } else {
        const auto& streamed = std::get<StreamedBody>(request.body);
        ex.source = &streamed.source;
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(h, CURLOPT_READDATA, &ex);
        curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
        if (streamed.size) {
          curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(*streamed.size));
        } else {
          headers.add("Transfer-Encoding: chunked");
        }
      }
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

    const CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK) return std::move(ex.response);
    return std::unexpected(map_error(h, rc, ex, error_buffer[0] ? error_buffer : curl_easy_strerror(rc)));
  }

  TransportError map_error(CURL* h, CURLcode rc, const Exchange& ex, const char* detail) const {
    if (!ex.source_error.empty()) return {TransportErrorKind::body_source, ex.source_error};
    switch (rc) {
      case CURLE_COULDNT_CONNECT: {
        long os_errno = 0;
        curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
        return connect_error(os_errno, m_socket, detail);
      }
      case CURLE_OPERATION_TIMEDOUT:
        return {TransportErrorKind::timeout,
                std::string("no complete answer from ") + m_socket.string() + " in time (" + detail + ")"};
      case CURLE_ABORTED_BY_CALLBACK:
        return {TransportErrorKind::cancelled, "cancelled"};
      case CURLE_WRITE_ERROR:
        if (ex.sink_stopped) return {TransportErrorKind::aborted, "stopped by the receiver"};
        break;
      // The engine closed or reset the connection before the response ended:
      // killed, crashed, or restarted under us.
      case CURLE_GOT_NOTHING:
      case CURLE_PARTIAL_FILE:
      case CURLE_RECV_ERROR:
      case CURLE_SEND_ERROR:
        return {TransportErrorKind::engine_died,
                "the engine at " + m_socket.string() + " closed the connection mid-response (" + detail + ")"};
      default:
        break;
    }
    return {TransportErrorKind::other, std::string(detail)};
  }

  std::filesystem::path m_socket;
  UnixSocketOptions m_options;
  net::HandlePool m_handles;
};

}  // namespace

std::unique_ptr<Transport> make_unix_socket_transport(std::filesystem::path socket, UnixSocketOptions options) {
  return std::make_unique<UnixSocketTransport>(std::move(socket), options);
}

}  // namespace orc::engine
