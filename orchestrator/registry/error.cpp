#include "orchestrator/registry/error.hpp"

namespace orc::registry {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::not_found:
      return "not found";
    case ErrorKind::unauthorized:
      return "unauthorized";
    case ErrorKind::denied:
      return "denied";
    case ErrorKind::digest_mismatch:
      return "digest mismatch";
    case ErrorKind::unreachable:
      return "unreachable";
    case ErrorKind::timeout:
      return "timed out";
    case ErrorKind::server:
      return "server error";
    case ErrorKind::protocol:
      return "protocol error";
    case ErrorKind::io:
      return "i/o error";
    case ErrorKind::invalid:
      return "invalid";
  }
  return "unknown";
}

}  // namespace orc::registry
