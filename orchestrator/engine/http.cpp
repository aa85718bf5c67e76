#include "orchestrator/engine/http.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace orc::engine {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// Closes the FILE when the last copy of the BodySource goes.
struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};

}  // namespace

std::optional<std::string> find_header(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers)
    if (iequals(key, name)) return value;
  return std::nullopt;
}

std::string_view to_string(TransportErrorKind kind) {
  switch (kind) {
    case TransportErrorKind::socket_missing:
      return "socket missing";
    case TransportErrorKind::permission_denied:
      return "permission denied";
    case TransportErrorKind::connection_refused:
      return "connection refused";
    case TransportErrorKind::engine_died:
      return "engine died";
    case TransportErrorKind::timeout:
      return "timeout";
    case TransportErrorKind::cancelled:
      return "cancelled";
    case TransportErrorKind::aborted:
      return "aborted";
    case TransportErrorKind::body_source:
      return "request body failed";
    case TransportErrorKind::other:
      return "transport error";
  }
  return "transport error";
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

}  // namespace orc::engine
