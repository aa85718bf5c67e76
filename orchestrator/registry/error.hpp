#pragma once
// Expected failures of the registry client (error tier a): every public call
// returns std::expected<T, Error>. The message is complete and safe to print:
// it names the method, the URL without credentials, the HTTP status and the
// registry's own error code and message when it sent one.
#include <string>
#include <string_view>

namespace orc::registry {

enum class ErrorKind {
  not_found,        // 404: no such blob, manifest, tag or repository
  unauthorized,     // 401 after every credential we have was tried
  denied,           // 403: authenticated but not allowed
  digest_mismatch,  // the bytes do not hash to the digest asked for
  unreachable,      // no connection, connection lost, stalled (after retries)
  timeout,          // the operation's deadline passed (deadline.hpp): the message says which
  server,           // 429 / 5xx that outlived the retries
  protocol,         // an answer the distribution spec does not allow, bad JSON
  io,               // a local file could not be read or written
  invalid,          // the caller's input: a malformed digest, reference, manifest
};

struct Error {
  ErrorKind kind = ErrorKind::protocol;
  std::string message;
  int status = 0;    // the HTTP status, 0 when there was no response
  std::string code;  // the registry's error code ("BLOB_UNKNOWN"), if it sent one
};

// "not found", "digest mismatch", ...: the short name of a kind.
std::string_view to_string(ErrorKind kind);

}  // namespace orc::registry
