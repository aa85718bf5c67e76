#include "orchestrator/net/http.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "orchestrator/util/strings.hpp"

namespace orc::net {

namespace {

// Closes the FILE when the last copy of the BodySource goes.
struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};

class CancellableTransport final : public Transport {
 public:
  CancellableTransport(std::shared_ptr<Transport> inner, const std::atomic<bool>* cancel)
      : m_inner(std::move(inner)), m_cancel(cancel) {}

  std::expected<Response, TransportError> send(const Request& request, BodySink* sink) override {
    if (m_cancel->load()) return std::unexpected(TransportError{TransportErrorKind::cancelled, "cancelled"});
    if (request.cancel) return m_inner->send(request, sink);
    Request bound = request;
    bound.cancel = m_cancel;
    return m_inner->send(bound, sink);
  }

 private:
  std::shared_ptr<Transport> m_inner;
  const std::atomic<bool>* m_cancel;
};

}  // namespace

std::shared_ptr<Transport> cancellable(std::shared_ptr<Transport> inner, const std::atomic<bool>* cancel) {
  return std::make_shared<CancellableTransport>(std::move(inner), cancel);
}

std::optional<std::string> find_header(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers)
    if (key.size() == name.size() && util::starts_with_ci(key, name)) return value;
  return std::nullopt;
}

std::uint64_t body_size(const Body& body) {
  if (const auto* slice = std::get_if<FileSlice>(&body)) return slice->size;
  if (const auto* streamed = std::get_if<StreamedBody>(&body)) return streamed->size.value_or(0);
  return std::get<std::string>(body).size();
}

std::string_view to_string(TransportErrorKind kind) {
  switch (kind) {
    case TransportErrorKind::socket_missing:
      return "socket missing";
    case TransportErrorKind::permission_denied:
      return "permission denied";
    case TransportErrorKind::connection_refused:
      return "connection refused";
    case TransportErrorKind::connect:
      return "cannot connect";
    case TransportErrorKind::tls:
      return "TLS failure";
    case TransportErrorKind::closed:
      return "connection closed";
    case TransportErrorKind::timeout:
      return "timeout";
    case TransportErrorKind::cancelled:
      return "cancelled";
    case TransportErrorKind::aborted:
      return "aborted";
    case TransportErrorKind::body_source:
      return "request body failed";
    case TransportErrorKind::too_large:
      return "response too large";
    case TransportErrorKind::other:
      return "transport error";
  }
  return "transport error";
}

bool is_transient(TransportErrorKind kind) {
  return kind == TransportErrorKind::connect || kind == TransportErrorKind::timeout ||
         kind == TransportErrorKind::closed;
}

std::expected<StreamedBody, std::string> file_body(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return std::unexpected(path.string() + ": " + ec.message());
  std::shared_ptr<std::FILE> file(std::fopen(path.c_str(), "rb"), FileCloser{});
  if (!file) return std::unexpected(path.string() + ": " + std::strerror(errno));
  BodySource source = [file, name = path.string()](std::span<char> buffer) -> std::expected<std::size_t, std::string> {
    const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (n == 0 && std::ferror(file.get())) return std::unexpected("reading " + name + ": " + std::strerror(errno));
    return n;
  };
  return StreamedBody{.source = std::move(source), .size = size};
}

std::string url_encode(std::string_view value) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' || u == '_' ||
        u == '.' || u == '~') {
      out += c;
    } else {
      out += '%';
      out += k_hex[u >> 4];
      out += k_hex[u & 0xF];
    }
  }
  return out;
}

}  // namespace orc::net
