// The safe unpacker (see pack.hpp): the private temporary trees an archive
// is unpacked into (unpacker.cpp checks and writes each entry) and renamed
// into place only when every entry was accepted; place_files for files that
// are already on disk; the leftovers of killed unpacks.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/tarsafe/archive_handle.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/cache/pack_names.hpp"
#include "orchestrator/cache/unpacker.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/tarsafe/rules.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/util/write.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

std::optional<std::vector<std::string>> split_safe_name(std::string_view name) {
  const auto path = tarsafe::normalize(name);
  if (!path || path->empty()) return std::nullopt;
  return util::split_any(*path, "/");
}

namespace {

// Removes the temporary tree unless it was renamed into place.
struct TempTree {
  fs::path path;
  ~TempTree() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// Read and write in large pieces: a 1 GiB layer is a few hundred calls.
constexpr std::size_t k_buffer_bytes = 4 << 20;

bool is_empty_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec) && !ec;
}

constexpr std::string_view k_unpack_marker = ".unpack-";

// The pid in ".NAME.unpack-<pid>-XXXXXX", if `name` is such a tree's.
std::optional<pid_t> unpack_owner(std::string_view name) {
  const auto at = name.rfind(k_unpack_marker);
  if (!name.starts_with(".") || at == std::string_view::npos) return std::nullopt;
  const std::string_view rest = name.substr(at + k_unpack_marker.size());
  const auto dash = rest.find('-');
  if (dash == 0 || dash == std::string_view::npos || rest.size() - dash != 7) return std::nullopt;
  pid_t pid = 0;
  for (const char c : rest.substr(0, dash)) {
    if (c < '0' || c > '9' || pid > 100'000'000) return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

bool process_gone(pid_t pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

// A directory (not a link to one) of this user: what an unpack of ours made.
bool is_own_directory(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid();
}

// The private temporary directory beside `dir_in` (which must not exist, or
// be empty) that is filled and then renamed to `target`. Its name carries
// this process's pid, so a later unpack beside it (or `cache gc` in the
// store's tmp/) can tell one left by a killed process from a live one.
std::expected<void, Error> begin_tree(const fs::path& dir_in, fs::path& target, TempTree& temp) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(dir_in, ec);
  if (ec) return std::unexpected(io_error("cannot resolve " + dir_in.string() + ": " + ec.message()));
  const fs::path dir = absolute.lexically_normal();
  target = dir.has_filename() ? dir : dir.parent_path();
  if (fs::symlink_status(target, ec).type() != fs::file_type::not_found && !is_empty_dir(target))
    return std::unexpected(
        invalid_error(target.string() + " exists and is not an empty directory; unpack needs a new one"));
  fs::create_directories(target.parent_path(), ec);
  const std::string stem = "." + target.filename().string() + std::string(k_unpack_marker);
  for (auto it = fs::directory_iterator(target.parent_path(), ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (const auto owner = unpack_owner(name);
        owner && name.starts_with(stem) && process_gone(*owner) && is_own_directory(it->path()))
      fs::remove_all(it->path(), ec);
  }
  std::string pattern = (target.parent_path() / (stem + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) return std::unexpected(io_error(errno_message("creating", pattern)));
  temp.path = pattern;
  return {};
}

std::expected<void, Error> commit_tree(TempTree& temp, const fs::path& target, bool sync) {
  ::chmod(temp.path.c_str(), 0755);
  if (::rename(temp.path.c_str(), target.c_str()) != 0)
    return std::unexpected(io_error(errno_message("moving the unpacked files to", target)));
  temp.path.clear();
  if (sync) fsync_dir(target.parent_path());
  return {};
}

// Copies `source` to the new file `fd`, hashing what it copies: the bytes
// hashed are the bytes written, whatever happens to `source` meanwhile.
std::expected<std::uint64_t, Error> copy_hashed(const fs::path& source, int fd, const fs::path& at,
                                                digest::BackgroundSha256& hasher) {
  const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return std::unexpected(io_error(errno_message("reading", source)));
  std::vector<std::byte> buffer(k_buffer_bytes);
  std::uint64_t size = 0;
  std::optional<Error> failure;
  for (;;) {
    const ssize_t r = ::read(in, buffer.data(), buffer.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) failure = io_error(errno_message("reading", source));
    if (r <= 0) break;
    const std::span<const std::byte> bytes(buffer.data(), static_cast<std::size_t>(r));
    hasher.update(bytes);
    if (!util::write_all(fd, bytes)) {
      failure = io_error(errno_message("writing", at));
      break;
    }
    size += static_cast<std::uint64_t>(r);
  }
  ::close(in);
  if (failure) {
    hasher.reset();
    return std::unexpected(*failure);
  }
  return size;
}

}  // namespace

std::expected<std::vector<UnpackedFile>, Error> place_files(const std::vector<PlacedFile>& files,
                                                            const fs::path& dir_in, const PlaceOptions& options) {
  fs::path target;
  TempTree temp;
  if (auto begun = begin_tree(dir_in, target, temp); !begun) return std::unexpected(begun.error());
  digest::BackgroundSha256 hasher;
  std::vector<UnpackedFile> placed;
  for (const auto& f : files) {
    const auto parts = split_safe_name(f.name);
    if (!parts) return std::unexpected(invalid_error("refused file name '" + f.name + "'"));
    // The tree is this process's own (mkdtemp), so creating directories in
    // it cannot be redirected by a symlink someone else planted.
    fs::path at = temp.path;
    for (std::size_t i = 0; i + 1 < parts->size(); ++i) {
      at /= (*parts)[i];
      if (::mkdir(at.c_str(), 0755) != 0 && errno != EEXIST)
        return std::unexpected(io_error(errno_message("creating", at)));
    }
    at /= parts->back();
    const int fd = ::open(at.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return std::unexpected(io_error(errno_message("creating", at)));
    auto copied = copy_hashed(f.source, fd, at, hasher);
    const bool ok = ::fchmod(fd, f.mode & 0777) == 0;
    if (::close(fd) != 0 || !ok) return std::unexpected(io_error(errno_message("writing", at)));
    if (!copied) return std::unexpected(copied.error());
    placed.push_back({f.name, *copied, hasher.digest().hex(), f.mode & 0777});
  }
  if (options.check)
    if (auto ok = options.check(placed); !ok) return std::unexpected(ok.error());
  if (auto committed = commit_tree(temp, target, false); !committed) return std::unexpected(committed.error());
  return placed;
}

std::expected<std::vector<UnpackedFile>, Error> unpack(const fs::path& archive_path, const fs::path& dir_in) {
  return unpack(archive_path, dir_in, UnpackOptions{});
}

namespace {

// Where unpack_stream's archive reads its bytes from.
struct StreamReader {
  ArchiveStream& stream;
  std::optional<Error> failure;  // the stream's own, returned as it came
};

la_ssize_t read_stream(archive* a, void* client, const void** buffer) {
  auto& reader = *static_cast<StreamReader*>(client);
  auto bytes = reader.stream.next();
  if (!bytes) {
    reader.failure = bytes.error();
    archive_set_error(a, EIO, "%s", bytes.error().message.c_str());
    return -1;
  }
  *buffer = bytes->data();
  return static_cast<la_ssize_t>(bytes->size());
}

// The entries of the opened archive `in` into `dir` (and options.mirror).
std::expected<std::vector<UnpackedFile>, Error> unpack_archive(archive* in, const std::string& what,
                                                               const fs::path& dir_in, const UnpackOptions& options,
                                                               const StreamReader* reader) {
  fs::path target, mirror_target;
  TempTree temp, mirror_temp;
  if (auto begun = begin_tree(dir_in, target, temp); !begun) return std::unexpected(begun.error());
  std::vector<fs::path> roots{temp.path};
  if (!options.mirror.empty()) {
    if (auto begun = begin_tree(options.mirror, mirror_target, mirror_temp); !begun)
      return std::unexpected(begun.error());
    roots.push_back(mirror_temp.path);
  }
  const auto failed = [&](Error error) {
    if (reader && reader->failure) error = *reader->failure;
    return std::unexpected(std::move(error));
  };
  Unpacker unpacker(std::move(roots), options);
  archive_entry* e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(in, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
    if (auto ok = unpacker.entry(in, e); !ok) return failed(ok.error());
  }
  if (rc != ARCHIVE_EOF) return failed(invalid_error(what + " is damaged: " + archive_error_string(in)));
  if (auto finished = unpacker.finish(); !finished) return failed(finished.error());
  if (options.check)
    if (auto ok = options.check(unpacker.files); !ok) return std::unexpected(ok.error());
  if (auto committed = commit_tree(temp, target, options.sync); !committed) return std::unexpected(committed.error());
  if (!options.mirror.empty())
    if (auto committed = commit_tree(mirror_temp, mirror_target, false); !committed)
      return std::unexpected(committed.error());
  return std::move(unpacker.files);
}

tarsafe::ReadArchive new_reader() {
  tarsafe::ReadArchive in = tarsafe::new_read_archive();
  archive_read_support_filter_all(in.get());
  archive_read_support_format_tar(in.get());
  return in;
}

}  // namespace

std::expected<std::vector<UnpackedFile>, Error> unpack(const fs::path& archive_path, const fs::path& dir_in,
                                                       const UnpackOptions& options) {
  auto in = new_reader();
  if (archive_read_open_filename(in.get(), archive_path.c_str(), k_buffer_bytes) != ARCHIVE_OK)
    return std::unexpected(io_error(archive_path.string() + ": " + archive_error_string(in.get())));
  return unpack_archive(in.get(), archive_path.string(), dir_in, options, nullptr);
}

std::expected<std::vector<UnpackedFile>, Error> unpack_stream(ArchiveStream& stream, const fs::path& dir_in,
                                                              const UnpackOptions& options) {
  auto in = new_reader();
  StreamReader reader{stream, std::nullopt};
  if (archive_read_open(in.get(), &reader, nullptr, read_stream, nullptr) != ARCHIVE_OK) {
    if (reader.failure) return std::unexpected(*reader.failure);
    return std::unexpected(invalid_error(std::string("the archive is damaged: ") + archive_error_string(in.get())));
  }
  return unpack_archive(in.get(), "the archive", dir_in, options, &reader);
}

std::size_t remove_abandoned_unpacks(const fs::path& dir) {
  std::size_t removed = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto owner = unpack_owner(it->path().filename().string());
    std::error_code rm;
    if (owner && process_gone(*owner) && is_own_directory(it->path()) && fs::remove_all(it->path(), rm) > 0) ++removed;
  }
  return removed;
}

}  // namespace orc::cache
