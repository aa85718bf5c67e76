#pragma once
// The small grammars of the distribution spec, as pure functions: repository
// URLs, tags, Link pagination, Content-Range and the resume decision of a
// blob download, and the registry's error JSON.
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/registry/auth.hpp"
#include "orchestrator/registry/error.hpp"

namespace orc::registry {

// "https://user:pw@registry.example:5000/team/artifacts" split into the
// origin ("https://registry.example:5000"), the repository ("team/artifacts")
// and the credentials, if the URL carried any.
struct Remote {
  std::string origin;
  std::string repository;
  std::optional<Credentials> credentials;
};
std::expected<Remote, Error> parse_remote(std::string_view url);

// The target of rel="next" in a Link header (RFC 8288), as written.
std::optional<std::string> next_link(std::string_view link);

// An absolute URL for a Location or Link value: absolute URLs are kept, an
// absolute path is joined to `origin`; anything else is nullopt.
std::optional<std::string> resolve_url(std::string_view origin, std::string_view location);

// "bytes FIRST-LAST/TOTAL" (TOTAL may be '*').
struct ContentRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parse_content_range(std::string_view value);

// What a download that asked for bytes from `have` does with the answer's
// head: append (206 starting exactly at `have`), restart from zero (200: the
// server ignored Range, or nothing was asked), or fail (a 206 for another
// range: a confused server whose bytes cannot be placed).
enum class ResumeAction { append, restart, fail };
ResumeAction resume_action(std::uint64_t have, int status, std::optional<std::string_view> content_range);

// The registry's error body, {"errors":[{"code","message","detail"}]}, as
// "CODE: message" lines joined by "; " and the first code. Empty when the
// body is not that JSON (a proxy's HTML page says nothing useful).
struct RegistryErrors {
  std::string text;
  std::string first_code;
};
RegistryErrors parse_registry_errors(std::string_view body);

}  // namespace orc::registry
