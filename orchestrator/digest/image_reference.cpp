#include "orchestrator/digest/image_reference.hpp"

#include "orchestrator/util/escape.hpp"

namespace orc::digest {

namespace {

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// The input as an error quotes it: printable, at most 80 characters.
std::string quoted(std::string_view text) {
  return "'" + util::printable(text.substr(0, 80)) + (text.size() > 80 ? "...'" : "'");
}

// One PATH component: alnum runs joined by '.', '_', "__" or runs of '-'.
bool is_valid_component(std::string_view c) {
  if (c.empty() || !is_lower_alnum(c.front()) || !is_lower_alnum(c.back())) return false;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (is_lower_alnum(c[i]) || c[i] == '-') continue;
    // Not last (the back is alnum), so c[i + 1] exists; "__" needs a third.
    if (c[i] == '.' && is_lower_alnum(c[i + 1])) continue;
    if (c[i] == '_' && is_lower_alnum(c[i + 1])) continue;
    if (c[i] == '_' && c[i + 1] == '_' && i + 2 < c.size() && is_lower_alnum(c[i + 2])) {
      ++i;
      continue;
    }
    return false;
  }
  return true;
}

// HOST[:PORT]: DNS labels joined by '.', or a bracketed IPv6 address; the
// port is digits.
bool is_valid_domain(std::string_view d) {
  std::string_view host = d;
  if (d.starts_with('[')) {
    const auto close = d.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    for (char c : d.substr(1, close - 1))
      if (!(is_alnum(c) || c == ':' || c == '.')) return false;
    host = {};
    d.remove_prefix(close + 1);
    if (d.empty()) return true;
    if (!d.starts_with(':')) return false;
  } else if (const auto colon = d.find(':'); colon != std::string_view::npos) {
    host = d.substr(0, colon);
    d.remove_prefix(colon);
  } else {
    d = {};
  }
  if (!d.empty()) {
    const std::string_view port = d.substr(1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return false;
  }
  if (host.empty()) return true;  // the bracketed form, checked above
  std::size_t start = 0;
  while (start <= host.size()) {
    const auto dot = host.find('.', start);
    const std::string_view label = host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !is_alnum(label.front()) || !is_alnum(label.back())) return false;
    for (char c : label)
      if (!is_alnum(c) && c != '-') return false;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

struct Parts {
  std::string path;
  std::optional<std::string> tag;
  std::optional<Digest> digest;
};

// PATH[:TAG][@DIGEST]; `whole` is what an error quotes.
std::expected<Parts, std::string> read_rest(std::string_view rest, std::string_view whole) {
  Parts out;
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    auto parsed = Digest::parse(rest.substr(at + 1));
    if (!parsed) return std::unexpected("image reference " + quoted(whole) + ": " + parsed.error());
    out.digest = *parsed;
    rest = rest.substr(0, at);
  }
  if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    const std::string_view tag = rest.substr(colon + 1);
    if (!is_valid_tag(tag))
      return std::unexpected("image reference " + quoted(whole) + ": tag " + quoted(tag) +
                             " is not a tag (up to 128 of A-Z a-z 0-9 _ . -, not starting with '.' or '-')");
    out.tag = std::string(tag);
    rest = rest.substr(0, colon);
  }
  if (!is_valid_repository(rest))
    return std::unexpected("image reference " + quoted(whole) + ": " + quoted(rest) +
                           " is not a repository name (lower-case letters, digits, '.', '_', '-', separated by '/')");
  out.path = std::string(rest);
  return out;
}

}  // namespace

bool is_valid_repository(std::string_view path) {
  if (path.empty() || path.size() > 255) return false;
  std::size_t start = 0;
  while (true) {
    const auto slash = path.find('/', start);
    if (!is_valid_component(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start)))
      return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

bool is_valid_tag(std::string_view tag) {
  if (tag.empty() || tag.size() > 128) return false;
  for (std::size_t i = 0; i < tag.size(); ++i) {
    const char c = tag[i];
    const bool word = is_alnum(c) || c == '_';
    if (!word && (i == 0 || (c != '.' && c != '-'))) return false;
  }
  return true;
}

std::expected<ImageReference, std::string> ImageReference::parse(std::string_view text) {
  std::string_view rest = text;
  std::string_view domain;
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    const std::string_view first = text.substr(0, slash);
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost") {
      domain = first;
      rest = text.substr(slash + 1);
    }
  }
  if (!domain.empty() && !is_valid_domain(domain))
    return std::unexpected("image reference " + quoted(text) + ": " + quoted(domain) +
                           " is not a registry host (HOST or HOST:PORT)");
  return read(domain, rest, text);
}

std::expected<ImageReference, std::string> ImageReference::parse_at(std::string_view domain, std::string_view text) {
  return read(domain, text, text);
}

std::expected<ImageReference, std::string> ImageReference::read(std::string_view domain, std::string_view rest,
                                                                 std::string_view whole) {
  auto parts = read_rest(rest, whole);
  if (!parts) return std::unexpected(std::move(parts.error()));
  ImageReference out;
  out.m_domain = std::string(domain);
  out.m_path = std::move(parts->path);
  out.m_tag = std::move(parts->tag);
  out.m_digest = parts->digest;
  return out;
}

std::string ImageReference::repository() const { return m_domain.empty() ? m_path : m_domain + "/" + m_path; }

ImageReference ImageReference::with_tag(std::string tag) const {
  ImageReference out = *this;
  out.m_tag = std::move(tag);
  out.m_digest.reset();
  return out;
}

std::string ImageReference::to_string() const {
  std::string out = repository();
  if (m_tag) out += ":" + *m_tag;
  if (m_digest) out += "@" + m_digest->to_string();
  return out;
}

}  // namespace orc::digest
