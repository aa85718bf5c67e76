#include "orchestrator/engine/error.hpp"

#include "orchestrator/engine/answers.hpp"

namespace orc::engine {

namespace {

using net::TransportErrorKind;

ErrorKind kind_of(TransportErrorKind kind) {
  switch (kind) {
    case TransportErrorKind::socket_missing:
      return ErrorKind::socket_missing;
    case TransportErrorKind::permission_denied:
      return ErrorKind::permission_denied;
    case TransportErrorKind::connection_refused:
      return ErrorKind::connection_refused;
    case TransportErrorKind::closed:
      return ErrorKind::engine_died;
    case TransportErrorKind::timeout:
      return ErrorKind::timeout;
    case TransportErrorKind::cancelled:
      return ErrorKind::cancelled;
    case TransportErrorKind::body_source:
      return ErrorKind::io;
    case TransportErrorKind::connect:
    case TransportErrorKind::tls:
    case TransportErrorKind::too_large:
    case TransportErrorKind::aborted:
    case TransportErrorKind::other:
      return ErrorKind::transport;
  }
  return ErrorKind::transport;
}

// The short name of a transport failure in an engine's message: a closed
// connection is the engine dying under us.
std::string_view transport_words(TransportErrorKind kind) {
  return kind == TransportErrorKind::closed ? "engine died" : net::to_string(kind);
}

}  // namespace

bool Error::engine_unreachable() const {
  switch (kind) {
    case ErrorKind::socket_missing:
    case ErrorKind::permission_denied:
    case ErrorKind::connection_refused:
    case ErrorKind::engine_died:
    case ErrorKind::timeout:
    case ErrorKind::transport:
    case ErrorKind::unsupported_version:
    case ErrorKind::protocol:
      return true;
    default:
      return false;
  }
}

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::socket_missing:
      return "socket missing";
    case ErrorKind::permission_denied:
      return "permission denied";
    case ErrorKind::connection_refused:
      return "connection refused";
    case ErrorKind::engine_died:
      return "engine died";
    case ErrorKind::timeout:
      return "timeout";
    case ErrorKind::transport:
      return "transport error";
    case ErrorKind::not_found:
      return "not found";
    case ErrorKind::conflict:
      return "conflict";
    case ErrorKind::api:
      return "engine error";
    case ErrorKind::unsupported_version:
      return "unsupported engine version";
    case ErrorKind::protocol:
      return "unexpected answer";
    case ErrorKind::build_failed:
      return "image build failed";
    case ErrorKind::config:
      return "bad engine configuration";
    case ErrorKind::invalid_spec:
      return "invalid build spec";
    case ErrorKind::unsafe_archive:
      return "unsafe archive";
    case ErrorKind::io:
      return "I/O error";
    case ErrorKind::cancelled:
      return "cancelled";
  }
  return "engine error";
}

Error from_transport(const net::TransportError& error, std::string_view doing) {
  const ErrorKind kind = kind_of(error.kind);
  const std::string_view words = transport_words(error.kind);
  std::string message(doing);
  message += ": ";
  message += words;
  if (!error.message.empty() && error.message != words) message += ": " + error.message;
  return Error{.kind = kind, .message = std::move(message)};
}

Error from_status(const net::Response& response, std::string_view doing) {
  ErrorKind kind = ErrorKind::api;
  if (response.status == 404) kind = ErrorKind::not_found;
  if (response.status == 409) kind = ErrorKind::conflict;
  return Error{.kind = kind,
               .message = std::string(doing) + ": " + read_engine_message(response.body, response.status),
               .http_status = response.status};
}

}  // namespace orc::engine
