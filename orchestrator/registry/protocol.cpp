#include "orchestrator/registry/protocol.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::registry {

namespace {

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// Percent-decoding for user:password in a URL.
std::string percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      unsigned value = 0;
      const auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
      if (ec == std::errc() && end == text.data() + i + 3) {
        out += static_cast<char>(value);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

}  // namespace

std::expected<Remote, Error> parse_remote(std::string_view url) {
  const auto bad = [&](std::string why) {
    return std::unexpected(Error{ErrorKind::invalid, "bad registry URL '" + redact_url(url) + "': " + why});
  };
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return bad("expected http://HOST[:PORT]/REPOSITORY or https://...");
  const std::string scheme = util::to_lower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") return bad("the scheme must be http or https");
  std::string_view rest = url.substr(scheme_end + 3);
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) return bad("no repository after the host");
  std::string_view authority = rest.substr(0, slash);
  std::string_view repository = rest.substr(slash + 1);
  while (repository.ends_with('/')) repository.remove_suffix(1);
  Remote remote;
  bool userinfo_has_raw_delimiter = false;
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    userinfo_has_raw_delimiter = userinfo.find_first_of("?#") != std::string_view::npos;
    const auto colon = userinfo.find(':');
    remote.credentials = Credentials{percent_decode(userinfo.substr(0, colon)),
                                     colon == std::string_view::npos ? "" : percent_decode(userinfo.substr(colon + 1))};
    authority = authority.substr(at + 1);
  }
  if (authority.empty()) return bad("no host");
  if (authority.find_first_of("?#") != std::string_view::npos || (remote.credentials && userinfo_has_raw_delimiter))
    return bad("a '?' or '#' before the repository: percent-encode it in a user name or password (%3F, %23)");
  if (repository.find_first_of("?#") != std::string_view::npos) return bad("a query or fragment has no meaning here");
  if (!digest::is_valid_repository(repository))
    return bad("'" + std::string(repository) +
               "' is not a repository name (lower-case letters, digits, '.', '_', '-', separated by '/')");
  remote.origin = scheme + "://" + std::string(authority);
  remote.repository = std::string(repository);
  return remote;
}

std::optional<std::string> next_link(std::string_view link) {
  // <url>; rel="next", <url2>; rel="prev"
  std::size_t pos = 0;
  while (pos < link.size()) {
    const auto open = link.find('<', pos);
    if (open == std::string_view::npos) return std::nullopt;
    const auto close = link.find('>', open);
    if (close == std::string_view::npos) return std::nullopt;
    const auto next = link.find('<', close);
    const std::string params = util::to_lower(
        link.substr(close + 1, next == std::string_view::npos ? std::string_view::npos : next - close - 1));
    std::string compact;
    for (const char c : params)
      if (c != ' ' && c != '"') compact += c;
    if (compact.find(";rel=next") != std::string::npos) return std::string(link.substr(open + 1, close - open - 1));
    if (next == std::string_view::npos) return std::nullopt;
    pos = next;
  }
  return std::nullopt;
}

std::optional<std::string> resolve_url(std::string_view origin, std::string_view location) {
  if (location.starts_with("http://") || location.starts_with("https://")) return std::string(location);
  if (location.starts_with('/') && !location.starts_with("//")) return std::string(origin) + std::string(location);
  return std::nullopt;
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = util::trim(value);
  if (!util::starts_with_ci(value, "bytes ")) return std::nullopt;
  value.remove_prefix(6);
  const auto dash = value.find('-');
  const auto slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) return std::nullopt;
  const auto first = parse_u64(value.substr(0, dash));
  const auto last = parse_u64(value.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *last < *first) return std::nullopt;
  ContentRange range{.first = *first, .last = *last};
  const std::string_view total = value.substr(slash + 1);
  if (total != "*") {
    range.total = parse_u64(total);
    if (!range.total || *range.total <= *last) return std::nullopt;
  }
  return range;
}

ResumeAction resume_action(std::uint64_t have, int status, std::optional<std::string_view> content_range) {
  if (status == 200) return ResumeAction::restart;
  if (status != 206 || !content_range) return ResumeAction::fail;
  const auto range = parse_content_range(*content_range);
  return range && range->first == have ? ResumeAction::append : ResumeAction::fail;
}

RegistryErrors parse_registry_errors(std::string_view body) {
  RegistryErrors out;
  const auto json = nlohmann::json::parse(body, nullptr, false);
  if (!json.is_object()) return out;
  const auto errors = json.find("errors");
  if (errors == json.end() || !errors->is_array()) return out;
  for (const auto& e : *errors) {
    if (!e.is_object()) continue;
    const auto text = [&](const char* key) {
      const auto it = e.find(key);
      return it != e.end() && it->is_string() ? it->get<std::string>().substr(0, 300) : std::string();
    };
    const std::string code = text("code");
    const std::string message = text("message");
    if (code.empty() && message.empty()) continue;
    if (out.first_code.empty()) out.first_code = code;
    if (!out.text.empty()) out.text += "; ";
    out.text += code.empty() ? message : message.empty() ? code : code + ": " + message;
    if (out.text.size() > 1000) break;
  }
  return out;
}

}  // namespace orc::registry
