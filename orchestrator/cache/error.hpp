#pragma once
// Expected failures of the cache module (error tier a). The kind decides the
// exit code a command maps it to: io is an outside failure (3); not_found,
// ambiguous and invalid are bad input (2); corrupt is a failed check (1).
#include <string>

namespace orc::cache {

enum class ErrorKind {
  io,         // the file system or SQLite failed
  not_found,  // no blob, key or artifact set of that name
  ambiguous,  // a digest prefix that names more than one artifact set
  invalid,    // input that is not what it claims (a key file, a digest, a path,
              // an index that is missing, damaged or of another version)
  corrupt,    // stored bytes that no longer match their digest
};

struct Error {
  ErrorKind kind = ErrorKind::io;
  std::string message;
};

inline Error io_error(std::string message) { return {ErrorKind::io, std::move(message)}; }
inline Error invalid_error(std::string message) { return {ErrorKind::invalid, std::move(message)}; }

}  // namespace orc::cache
