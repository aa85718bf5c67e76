#pragma once
// Expected failures of the cache module (error tier a). The kind decides the
// exit code a command maps it to: io is an outside failure (3); not_found,
// ambiguous and invalid are bad input (2); corrupt is a failed check (1).
#include <cerrno>
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
  // The errno behind an io error, when one is known: a full (ENOSPC, EDQUOT)
  // or read-only (EROFS) file system is worded by the store (Store::explain)
  // and lets it open read-only.
  int os_error = 0;
};

inline Error io_error(std::string message) { return {ErrorKind::io, std::move(message)}; }
inline Error io_error(std::string message, int os_error) { return {ErrorKind::io, std::move(message), os_error}; }

// Whether the file system refused for want of space, or because it is mounted read-only.
inline bool is_full_errno(int os_error) { return os_error == ENOSPC || os_error == EDQUOT; }
inline bool is_full(const Error& error) { return error.kind == ErrorKind::io && is_full_errno(error.os_error); }
inline bool is_read_only(const Error& error) { return error.kind == ErrorKind::io && error.os_error == EROFS; }
inline Error invalid_error(std::string message) { return {ErrorKind::invalid, std::move(message)}; }

}  // namespace orc::cache
