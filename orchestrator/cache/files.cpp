#include "orchestrator/cache/files.hpp"

#include "orchestrator/util/env.hpp"
#include "orchestrator/util/fs.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

namespace orc::cache {

namespace fs = std::filesystem;

std::string errno_message(std::string_view what, const fs::path& path) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(errno);
}

Error errno_error(std::string_view what, const fs::path& path) {
  const int err = errno;
  return io_error(errno_message(what, path), err);
}

std::string utc_rfc3339(std::int64_t seconds) {
  const std::time_t t = seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::int64_t unix_seconds(const std::string& rfc3339) {
  std::tm tm{};
  if (::strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return std::time(nullptr);
  return ::timegm(&tm);
}

fs::path default_store_root() {
  if (auto dir = util::env_get("ORCHESTRATE_CACHE_DIR")) return *dir;
  if (auto xdg = util::env_get("XDG_CACHE_HOME")) return fs::path(*xdg) / "orchestrate";
  if (auto home = util::env_get("HOME")) return fs::path(*home) / ".cache" / "orchestrate";
  return fs::temp_directory_path() / "orchestrate-cache";
}

fs::path default_keys_dir() {
  if (auto dir = util::env_get("ORCHESTRATE_KEYS_DIR")) return *dir;
  if (auto xdg = util::env_get("XDG_CONFIG_HOME")) return fs::path(*xdg) / "orchestrate" / "keys";
  if (auto home = util::env_get("HOME")) return fs::path(*home) / ".config" / "orchestrate" / "keys";
  return fs::temp_directory_path() / "orchestrate-keys";
}

fs::path temp_name(const fs::path& dir, std::string_view stem) { return util::temp_name(dir, stem); }

void fsync_dir(const fs::path& dir) { util::fsync_dir(dir); }

namespace {

Error from_fs(const util::FsError& e) {
  return Error{e.kind == util::FsErrorKind::not_found ? ErrorKind::not_found : ErrorKind::io, e.message,
               e.error_number};
}

}  // namespace

std::expected<bool, Error> commit_no_replace(const fs::path& temp, const fs::path& target) {
  auto moved = util::commit_no_replace(temp, target);
  if (!moved) return std::unexpected(from_fs(moved.error()));
  return *moved;
}

std::expected<void, Error> write_file_atomic(const fs::path& target, std::string_view bytes, const fs::path& tmp_dir,
                                             unsigned mode, Replace replace) {
  auto written = util::write_file_atomic(target, bytes, {.tmp_dir = tmp_dir, .mode = mode, .replace = replace});
  if (written) return {};
  if (written.error().kind == util::FsErrorKind::exists)
    return std::unexpected(invalid_error(target.string() + " already exists; not replaced"));
  return std::unexpected(from_fs(written.error()));
}

std::expected<std::string, Error> read_file(const fs::path& path) {
  auto text = util::read_file(path, util::k_no_read_cap);
  if (!text) return std::unexpected(from_fs(text.error()));
  return std::move(*text);
}

std::expected<std::string, Error> read_small_file(const fs::path& path, std::uint64_t max_bytes,
                                                  std::string_view what) {
  auto text = util::read_file(path, max_bytes);
  if (text) return std::move(*text);
  const util::FsError& e = text.error();
  switch (e.kind) {
    case util::FsErrorKind::not_found:
      return std::unexpected(Error{ErrorKind::not_found, "cannot read " + path.string() + ": " + e.reason});
    case util::FsErrorKind::directory:
    case util::FsErrorKind::not_regular:
      return std::unexpected(invalid_error(path.string() + " is not a regular file; give " + std::string(what)));
    case util::FsErrorKind::too_large:
      if (e.size > 0)
        return std::unexpected(invalid_error(path.string() + " is " + std::to_string(e.size) + " bytes, more than " +
                                             std::string(what) + " holds (at most " + std::to_string(max_bytes) + ")"));
      break;
    default:
      break;
  }
  return std::unexpected(io_error(e.message));
}

}  // namespace orc::cache
