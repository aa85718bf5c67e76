#include "orchestrator/registry/auth.hpp"

#include <openssl/evp.h>

#include <array>
#include <nlohmann/json.hpp>

#include "orchestrator/util/strings.hpp"

namespace orc::registry {

namespace {

bool is_token_char(char c) {
  // RFC 7230 tchar.
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : m_text(text) {}
  void skip_space() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t')) ++m_pos;
  }
  bool done() {
    skip_space();
    return m_pos >= m_text.size();
  }
  bool eat(char c) {
    skip_space();
    if (m_pos < m_text.size() && m_text[m_pos] == c) {
      ++m_pos;
      return true;
    }
    return false;
  }
  std::string token() {
    skip_space();
    const std::size_t begin = m_pos;
    while (m_pos < m_text.size() && is_token_char(m_text[m_pos])) ++m_pos;
    return std::string(m_text.substr(begin, m_pos - begin));
  }
  // A quoted-string with backslash escapes; nullopt when unterminated.
  std::optional<std::string> quoted() {
    std::string out;
    ++m_pos;  // the opening quote
    while (m_pos < m_text.size()) {
      const char c = m_text[m_pos++];
      if (c == '"') return out;
      if (c == '\\' && m_pos < m_text.size()) {
        out += m_text[m_pos++];
      } else {
        out += c;
      }
    }
    return std::nullopt;
  }
  bool at_quote() {
    skip_space();
    return m_pos < m_text.size() && m_text[m_pos] == '"';
  }
  std::size_t pos() const { return m_pos; }
  void seek(std::size_t pos) { m_pos = pos; }

 private:
  std::string_view m_text;
  std::size_t m_pos = 0;
};

}  // namespace

// Grammar (RFC 7235): challenge = scheme [ 1*SP ( token68 / #auth-param ) ],
// challenges separated by commas, auth-param = token "=" ( token / quoted ).
// A comma is ambiguous between "next param" and "next challenge": a token
// followed by '=' is a param, a token followed by space or end is a scheme.
std::vector<Challenge> parse_challenges(std::string_view header) {
  std::vector<Challenge> out;
  Scanner s(header);
  while (!s.done()) {
    if (s.eat(',')) continue;
    std::string scheme = s.token();
    if (scheme.empty()) return out;
    Challenge challenge{.scheme = util::to_lower(scheme)};
    for (;;) {
      const std::size_t mark = s.pos();
      std::string name = s.token();
      if (name.empty() || !s.eat('=')) {
        s.seek(mark);  // a new challenge (or the end)
        break;
      }
      std::string value;
      if (s.at_quote()) {
        auto quoted = s.quoted();
        if (!quoted) {
          out.push_back(std::move(challenge));
          return out;
        }
        value = std::move(*quoted);
      } else {
        value = s.token();
      }
      challenge.params[util::to_lower(name)] = std::move(value);
      if (!s.eat(',')) break;
    }
    out.push_back(std::move(challenge));
    // Anything that is neither a comma nor a new scheme ends the parse.
    const std::size_t mark = s.pos();
    if (!s.done() && s.token().empty()) return out;
    s.seek(mark);
  }
  return out;
}

std::string basic_authorization(const Credentials& credentials) {
  const std::string plain = credentials.username + ":" + credentials.password;
  std::string encoded(4 * ((plain.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                                reinterpret_cast<const unsigned char*>(plain.data()), static_cast<int>(plain.size()));
  encoded.resize(static_cast<std::size_t>(n));
  return "Basic " + encoded;
}

std::string token_url(const Challenge& challenge) {
  const auto realm = challenge.params.find("realm");
  if (realm == challenge.params.end()) return {};
  if (!realm->second.starts_with("https://") && !realm->second.starts_with("http://")) return {};
  std::string url = realm->second;
  char separator = url.find('?') == std::string::npos ? '?' : '&';
  for (const char* key : {"service", "scope"}) {
    const auto it = challenge.params.find(key);
    if (it == challenge.params.end()) continue;
    // A scope may list several scopes separated by spaces; the spec sends
    // each as its own scope parameter.
    for (const auto& part :
         key == std::string_view("scope") ? util::split_any(it->second, " ") : std::vector<std::string>{it->second}) {
      url += separator;
      url += key;
      url += '=';
      url += net::url_encode(part);
      separator = '&';
    }
  }
  return url;
}

std::expected<std::string, Error> parse_token_response(std::string_view body) {
  const auto json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_object()) {
    for (const char* key : {"token", "access_token"}) {
      const auto it = json.find(key);
      if (it != json.end() && it->is_string() && !it->get_ref<const std::string&>().empty())
        return it->get<std::string>();
    }
  }
  return std::unexpected(Error{ErrorKind::protocol, "the token endpoint's answer holds no token"});
}

std::string redact_url(std::string_view url) {
  std::string out(url);
  const auto scheme_end = out.find("://");
  if (scheme_end != std::string::npos) {
    const auto authority_begin = scheme_end + 3;
    // The authority runs to the first '/', as parse_remote reads it: a '?'
    // or '#' before the '@' belongs to a (malformed) password, which is
    // exactly what must not be shown.
    const auto authority_end = out.find('/', authority_begin);
    const auto at = out.rfind('@', authority_end == std::string::npos ? out.size() : authority_end);
    if (at != std::string::npos && at >= authority_begin) out.erase(authority_begin, at + 1 - authority_begin);
  }
  const auto query = out.find('?');
  if (query == std::string::npos) return out;
  std::string result = out.substr(0, query + 1);
  bool first = true;
  for (const auto& param : util::split_any(std::string_view(out).substr(query + 1), "&")) {
    if (!first) result += '&';
    first = false;
    const auto eq = param.find('=');
    const std::string name = util::to_lower(param.substr(0, eq));
    const bool secret = name.find("token") != std::string::npos || name.find("password") != std::string::npos ||
                        name.find("signature") != std::string::npos || name.find("credential") != std::string::npos ||
                        name == "sig" || name == "_state";
    result += secret && eq != std::string::npos ? param.substr(0, eq) + "=<redacted>" : param;
  }
  return result;
}

std::string redact(const net::Headers& headers) {
  std::string out;
  for (const auto& [name, value] : headers) {
    const std::string lower = util::to_lower(name);
    const bool secret =
        lower == "authorization" || lower == "proxy-authorization" || lower == "cookie" || lower == "set-cookie";
    out += name + ": " + (secret ? std::string("<redacted>") : value) + "\n";
  }
  return out;
}

}  // namespace orc::registry
