#include "orchestrator/registry/transport.hpp"

#include "orchestrator/util/strings.hpp"

namespace orc::registry {

std::optional<std::string> find_header(const Headers& headers, std::string_view name) {
  const std::string wanted = util::to_lower(name);
  for (const auto& [key, value] : headers)
    if (util::to_lower(key) == wanted) return value;
  return std::nullopt;
}

bool is_transient(TransportErrorKind kind) {
  return kind == TransportErrorKind::connect || kind == TransportErrorKind::timeout ||
         kind == TransportErrorKind::broken;
}

std::string url_encode(std::string_view value) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' || u == '.' ||
        u == '_' || u == '~') {
      out += c;
    } else {
      out += '%';
      out += k_hex[u >> 4];
      out += k_hex[u & 0xf];
    }
  }
  return out;
}

}  // namespace orc::registry
