#pragma once
// Registry authentication: the WWW-Authenticate challenge a 401 carries
// (RFC 7235), Basic credentials, and the token flow of the distribution spec
// (Bearer realm="https://auth/token",service="registry",scope="repository:x:pull"
// -> GET realm?service=..&scope=.. -> {"token": ...} -> Authorization: Bearer).
// Also the redaction every log line and error message goes through.
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/net/http.hpp"
#include "orchestrator/registry/error.hpp"

namespace orc::registry {

// Never printed: redact() and redact_url() are the only ways to show what
// carries them.
struct Credentials {
  std::string username;
  std::string password;
};

struct Challenge {
  std::string scheme;                         // lower case: "basic", "bearer"
  std::map<std::string, std::string> params;  // names lower case, values unquoted
};

// Every challenge of one WWW-Authenticate value, in order. Malformed text
// gives the challenges parsed before it (a server's typo must not make a
// usable Basic challenge unusable); an empty vector when there are none.
std::vector<Challenge> parse_challenges(std::string_view header);

// "Basic base64(user:password)".
std::string basic_authorization(const Credentials& credentials);

// The token endpoint's URL for a Bearer challenge: realm with service and
// scope added as query parameters. Empty when the realm is not http(s).
std::string token_url(const Challenge& challenge);

// The token of the endpoint's JSON answer ("token", or OAuth's
// "access_token"); protocol error when neither is a non-empty string.
std::expected<std::string, Error> parse_token_response(std::string_view body);

// The URL without user:password@ and without the values of query parameters
// that may carry secrets (token, password, signatures of presigned URLs).
std::string redact_url(std::string_view url);

// "Name: value" lines with Authorization (and cookie) values replaced by
// "<redacted>", for debug logs.
std::string redact(const net::Headers& headers);

}  // namespace orc::registry
