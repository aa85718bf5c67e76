#pragma once
// File-system primitives every part of the store shares: where the store and
// the keys live, and the write-to-temp, fsync, rename sequence that makes a
// reader see a whole file or none.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>
#include <string_view>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/util/fs.hpp"

namespace orc::cache {

// $ORCHESTRATE_CACHE_DIR, else $XDG_CACHE_HOME/orchestrate, else
// $HOME/.cache/orchestrate.
std::filesystem::path default_store_root();

// $ORCHESTRATE_KEYS_DIR, else $XDG_CONFIG_HOME/orchestrate/keys, else
// $HOME/.config/orchestrate/keys.
std::filesystem::path default_keys_dir();

// A name in `dir` no other thread or process uses: stem, pid, a process-wide
// counter, ".tmp". gc recognises stale temporaries by the suffix.
std::filesystem::path temp_name(const std::filesystem::path& dir, std::string_view stem);

// fsyncs a directory so a rename into it survives a crash; failures are
// ignored (some file systems refuse fsync on directories).
void fsync_dir(const std::filesystem::path& dir);

using Replace = util::Replace;

// Writes `bytes` to `target` through a temporary file in `tmp_dir` (same file
// system), fsync, rename, fsync of the target's directory. `mode` is the
// file's permission bits (0600 for private keys: set before any byte is
// written). With Replace::refuse an existing target is an error of kind
// invalid and is left as it was.
std::expected<void, Error> write_file_atomic(const std::filesystem::path& target, std::string_view bytes,
                                             const std::filesystem::path& tmp_dir, unsigned mode = 0644,
                                             Replace replace = Replace::allow);

// Moves a complete temporary file to `target` without ever replacing an
// existing file (renameat2 RENAME_NOREPLACE, else link + unlink). Returns
// false when the target already existed (the temporary is removed).
std::expected<bool, Error> commit_no_replace(const std::filesystem::path& temp, const std::filesystem::path& target);

std::expected<std::string, Error> read_file(const std::filesystem::path& path);

// A small file a user names (a key): refused unless it is a regular file of
// at most `max_bytes` (so /dev/zero and FIFOs are errors, not endless or
// blocking reads); `what` names it in the error ("a public key PEM file").
std::expected<std::string, Error> read_small_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                                                  std::string_view what);

// "2025-01-02T03:04:05Z" for Unix seconds.
std::string utc_rfc3339(std::int64_t seconds);
// And back; now for a text that is not of that form.
std::int64_t unix_seconds(const std::string& rfc3339);

std::string errno_message(std::string_view what, const std::filesystem::path& path);
// An io error of errno_message's text that keeps errno (Error::os_error).
Error errno_error(std::string_view what, const std::filesystem::path& path);

}  // namespace orc::cache
