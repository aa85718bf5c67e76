#pragma once
// The engine module's expected-failure type (error tier a, STYLE.md): what
// went wrong talking to a container engine, in words a user can act on.
#include <string>
#include <string_view>

#include "orchestrator/net/http.hpp"

namespace orc::engine {

enum class ErrorKind {
  // The transport failed; see net::TransportErrorKind for what each means.
  socket_missing,
  permission_denied,
  connection_refused,
  engine_died,
  timeout,
  transport,
  // The engine answered, and the answer was a failure.
  not_found,            // image, container or path
  conflict,             // 409: name in use, container not running, ...
  api,                  // any other error status
  unsupported_version,  // the engine's API is older than 1.41
  protocol,             // an answer we could not parse
  build_failed,         // an image build's step failed
  // Our side.
  config,          // an engine choice or DOCKER_HOST we cannot use
  invalid_spec,    // a BuildSpec the engine cannot express (a ':' in a bind path, ...)
  unsafe_archive,  // a tar from the engine broke the extraction rules (tar_extract.hpp)
  io,              // local files: a tar to upload, a destination to write
  cancelled,       // the caller's cancellation flag was set
};

struct Error {
  ErrorKind kind = ErrorKind::api;
  std::string message;
  int http_status = 0;  // the engine's status when it answered; 0 otherwise

  // True for failures of the engine itself rather than of one request; the
  // build command maps these to exit code 3.
  bool engine_unreachable() const;
};

std::string_view to_string(ErrorKind kind);

// A transport failure as an engine error; `doing` says what was being done
// ("starting container 1a2b3c"), so the message reads
// "starting container 1a2b3c: the engine died: ...".
Error from_transport(const net::TransportError& error, std::string_view doing);

// An engine error status as an Error: the message is the engine's own
// ("message" of Docker's and Podman's JSON error body, or the raw body),
// prefixed with `doing`. 404 maps to not_found and 409 to conflict.
Error from_status(const net::Response& response, std::string_view doing);

}  // namespace orc::engine
