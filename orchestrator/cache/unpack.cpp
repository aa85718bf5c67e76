// The safe unpacker (see pack.hpp). Every entry is checked before anything
// is created for it, into a private temporary directory that only this
// process writes (mkdtemp, 0700), so a check made with lstat still holds
// when the entry is created.
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

#include "orchestrator/cache/chunks.hpp"
#include "orchestrator/cache/fanout.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/cache/pack_names.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

std::optional<std::vector<std::string>> split_safe_name(std::string_view name) {
  if (name.empty() || name.front() == '/') return std::nullopt;
  std::vector<std::string> parts;
  for (auto& part : util::split_any(name, "/")) {
    if (part == "..") return std::nullopt;
    if (part != ".") parts.push_back(std::move(part));
  }
  if (parts.empty()) return std::nullopt;
  return parts;
}

bool symlink_stays_inside(std::string_view target, std::size_t link_depth) {
  if (target.empty() || target.front() == '/') return false;
  std::size_t ups = 0;
  bool named = false;
  for (const auto& part : util::split_any(target, "/")) {
    if (part == "..") {
      if (named) return false;
      ++ups;
    } else if (part != ".") {
      named = true;
    }
  }
  return ups <= link_depth;
}

namespace {

struct ReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

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
constexpr std::uint64_t k_writeback_bytes = 16 << 20;
// Files this large have their steps (hash, one write per tree) run side by
// side on threads of their own; smaller ones are done inline.
constexpr std::uint64_t k_fanout_bytes = 8 << 20;

// Turns O_DIRECT on or off for an open file; false where it cannot be.
bool set_direct(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) == 0;
}

bool write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t w = ::write(fd, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    bytes = bytes.subspan(static_cast<std::size_t>(w));
  }
  return true;
}

// Writes the entries of one archive into one tree, or two (UnpackOptions::
// mirror): every check is made against the first, and the second, private
// too and built by the same steps, has the same shape.
class Unpacker {
 public:
  Unpacker(std::vector<fs::path> roots, const UnpackOptions& options) : m_roots(std::move(roots)), m_options(options) {}

  std::expected<void, Error> entry(archive* in, archive_entry* e) {
    const char* raw = archive_entry_pathname(e);
    const std::string name = raw ? raw : "";
    const auto refuse = [&](const std::string& why) {
      return std::unexpected(invalid_error("refused archive entry '" + name + "': " + why));
    };
    const auto parts = split_safe_name(name);
    if (!parts) return refuse(name.starts_with("/") ? "absolute path" : "'..' component or empty name");
    mode_t perm = archive_entry_perm(e) & 0777;
    if (m_options.admit) {
      const mode_t kind = archive_entry_filetype(e);
      if (archive_entry_hardlink(e) || (kind != AE_IFREG && kind != AE_IFDIR))
        return refuse("only the files of the signed manifest are accepted, not links or devices");
      if (kind == AE_IFDIR) return {};  // the files' directories are made for them
      const la_int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
      if (size < 0) return refuse("it has no size");
      auto admitted = m_options.admit(util::join(*parts, "/"), static_cast<std::uint64_t>(size),
                                      static_cast<unsigned>(archive_entry_perm(e) & 07777));
      if (!admitted) return refuse(admitted.error().message);
      perm = static_cast<mode_t>(*admitted & 0777);
    }
    fs::path rel;
    for (std::size_t i = 0; i + 1 < parts->size(); ++i) {
      rel /= (*parts)[i];
      const fs::path at = m_roots[0] / rel;
      struct stat st {};
      if (::lstat(at.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) return refuse("it goes through the symlink '" + (*parts)[i] + "'");
        if (!S_ISDIR(st.st_mode)) return refuse("'" + (*parts)[i] + "' is not a directory");
        continue;
      }
      for (const auto& root : m_roots)
        if (::mkdir((root / rel).c_str(), 0755) != 0) return std::unexpected(io_error(errno_message("creating", at)));
    }
    rel /= parts->back();
    const fs::path at = m_roots[0] / rel;
    const mode_t type = archive_entry_filetype(e);
    struct stat existing {};
    const bool exists = ::lstat(at.c_str(), &existing) == 0;
    if (exists && !(type == AE_IFDIR && S_ISDIR(existing.st_mode))) return refuse("it appears twice");
    if (const char* hard = archive_entry_hardlink(e)) return hardlink(rel, hard, refuse);
    switch (type) {
      case AE_IFDIR:
        if (exists) return {};
        for (const auto& root : m_roots) {
          if (::mkdir((root / rel).c_str(), 0700) != 0) return std::unexpected(io_error(errno_message("creating", at)));
          // Modes last, so a read-only directory can still be filled; never
          // writable by others, whatever the archive says.
          m_dirs.push_back({root / rel, (perm & 0755) | 0700});
        }
        return {};
      case AE_IFREG:
        return file(in, rel, name, perm, archive_entry_size_is_set(e) ? archive_entry_size(e) : 0);
      case AE_IFLNK: {
        const char* target = archive_entry_symlink(e);
        if (!target || !symlink_stays_inside(target, parts->size() - 1))
          return refuse(std::string("symlink to '") + (target ? target : "") + "' points outside the directory");
        for (const auto& root : m_roots)
          if (::symlink(target, (root / rel).c_str()) != 0)
            return std::unexpected(io_error(errno_message("creating", root / rel)));
        return {};
      }
      case AE_IFCHR:
        return refuse("character device");
      case AE_IFBLK:
        return refuse("block device");
      case AE_IFIFO:
        return refuse("fifo");
      case AE_IFSOCK:
        return refuse("socket");
      default:
        return refuse("unknown entry type");
    }
  }

  void finish() {
    // Deepest first, so making a parent read-only never blocks a child.
    std::ranges::sort(m_dirs, std::greater{}, &Dir::path);
    for (const auto& d : m_dirs) ::chmod(d.path.c_str(), d.mode);
  }

  std::vector<UnpackedFile> files;

 private:
  struct Dir {
    fs::path path;
    mode_t mode;
  };

  // One file being written into each tree; closed (and unlinked by the
  // caller's TempTree) on every way out.
  struct Outputs {
    std::vector<int> fds;
    ~Outputs() {
      for (const int fd : fds)
        if (fd >= 0) ::close(fd);
    }
  };

  template <typename Refuse>
  std::expected<void, Error> hardlink(const fs::path& rel, std::string_view target, const Refuse& refuse) {
    const std::string why = "hardlink to '" + std::string(target) + "', which is not a file unpacked before it";
    const auto parts = split_safe_name(target);
    if (!parts) return refuse(why);
    fs::path source;
    struct stat st {};
    for (std::size_t i = 0; i < parts->size(); ++i) {
      source /= (*parts)[i];
      if (::lstat((m_roots[0] / source).c_str(), &st) != 0) return refuse(why);
      const bool last = i + 1 == parts->size();
      if (last ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)) return refuse(why);
    }
    for (const auto& root : m_roots)
      if (::link((root / source).c_str(), (root / rel).c_str()) != 0)
        return std::unexpected(io_error(errno_message("linking", root / rel)));
    return {};
  }

  std::expected<void, Error> file(archive* in, const fs::path& rel, const std::string& name, mode_t perm,
                                  std::int64_t declared_size) {
    Outputs out;
    for (const auto& root : m_roots) {
      const fs::path at = root / rel;
      out.fds.push_back(::open(at.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (out.fds.back() < 0) return std::unexpected(io_error(errno_message("creating", at)));
    }
    // The steps every block goes through: hashing, and writing into each
    // tree (the first one handed to the disk as it is written when synced,
    // so the fsync at the end waits for the last few MiB, not the whole
    // file). A large file runs them on threads of their own, side by side.
    digest::Sha256 hasher;
    // Looked up by the name admit() saw ("./x" is "x"), not the archive's spelling.
    const ManifestFile* signed_file =
        m_options.hash && m_options.signed_file ? m_options.signed_file(rel.generic_string()) : nullptr;
    std::optional<ChunkCheck> chunk_check;
    if (signed_file && signed_file->chunks.size != 0)
      chunk_check.emplace(signed_file->chunks, signed_file->size,
                          ChunkCheck::lanes_for(signed_file->chunks.sha256.size()));
    std::vector<std::uint64_t> written(out.fds.size(), 0);
    std::vector<int> write_errno(out.fds.size(), 0);  // each tree's, set on its step's thread
    std::uint64_t flushed = 0;                        // of the first tree's file, handed to the disk
    std::vector<BlockFanout::Step> steps;
    if (chunk_check) {
      for (std::size_t i = 0; i < chunk_check->lanes(); ++i) steps.push_back(chunk_check->lane(i));
    } else if (m_options.hash) {
      steps.push_back([&hasher](std::span<const std::byte> bytes) {
        hasher.update(bytes);
        return true;
      });
    }
    const bool fan_out =
        declared_size >= static_cast<std::int64_t>(k_fanout_bytes) && (m_options.hash || out.fds.size() > 1);
    // A large file for the store goes to the disk without the page cache
    // (O_DIRECT: the block is DMAed from the ring, no copy, no writeback
    // later), falling back to buffered writes where the file system refuses
    // it and for the file's last, partial block.
    bool direct = fan_out && m_options.sync && set_direct(out.fds[0], true);
    for (std::size_t t = 0; t < out.fds.size(); ++t)
      steps.push_back([&, t](std::span<const std::byte> bytes) {
        if (t == 0 && direct) {
          const bool aligned = bytes.size() % BlockFanout::k_alignment == 0 &&
                               reinterpret_cast<std::uintptr_t>(bytes.data()) % BlockFanout::k_alignment == 0;
          if (aligned) {
            ssize_t w;
            do {
              w = ::write(out.fds[t], bytes.data(), bytes.size());
            } while (w < 0 && errno == EINTR);
            if (w == static_cast<ssize_t>(bytes.size())) {
              written[t] += bytes.size();
              return true;
            }
            if (w > 0) {
              bytes = bytes.subspan(static_cast<std::size_t>(w));
            } else if (w < 0 && errno != EINVAL) {
              write_errno[t] = errno;
              return false;
            }
            written[t] += w > 0 ? static_cast<std::uint64_t>(w) : 0;
          }
          direct = false;
          if (!set_direct(out.fds[t], false)) {
            write_errno[t] = errno;
            return false;
          }
        }
        if (!write_all(out.fds[t], bytes)) {
          write_errno[t] = errno;
          return false;
        }
        written[t] += bytes.size();
        if (t == 0 && m_options.sync && written[t] - flushed >= k_writeback_bytes) {
          ::sync_file_range(out.fds[t], static_cast<off_t>(flushed), static_cast<off_t>(written[t] - flushed),
                            SYNC_FILE_RANGE_WRITE);
          flushed = written[t];
        }
        return true;
      });
    if (fan_out) m_fanout.begin(steps);
    // Waits for the steps on every way out: they use `out`, `hasher` and
    // `chunk_check`.
    struct Joined {
      BlockFanout* fanout;
      std::vector<bool> ok;
      const std::vector<bool>& end() {
        if (fanout) ok = std::exchange(fanout, nullptr)->end();
        return ok;
      }
      ~Joined() { end(); }
    } joined{fan_out ? &m_fanout : nullptr, std::vector<bool>(steps.size(), true)};

    // The first tree whose write failed, with its step's errno (the steps
    // of a large file run on other threads: errno here is not theirs).
    const auto write_error = [&]() -> Error {
      if (fan_out) joined.end();
      for (std::size_t t = 0; t < out.fds.size(); ++t)
        if (write_errno[t] != 0)
          return io_error("writing " + (m_roots[t] / rel).string() + ": " + std::strerror(write_errno[t]));
      return io_error("writing " + (m_roots.back() / rel).string() + " failed");
    };
    // A step failed: a chunk that does not match (a refusal), else a write
    // (a full disk is not the registry's fault).
    const auto step_error = [&]() -> Error {
      if (fan_out) joined.end();
      if (chunk_check)
        if (std::string mismatch = chunk_check->mismatch(); !mismatch.empty())
          return invalid_error("refused archive entry '" + name + "': " + mismatch);
      return write_error();
    };
    std::uint64_t size = 0;
    const auto put = [&](std::span<const std::byte> bytes) -> std::expected<void, Error> {
      m_total += bytes.size();
      if (m_options.max_bytes && m_total > m_options.max_bytes)
        return std::unexpected(invalid_error("refused archive entry '" + name + "': the files hold more than the " +
                                             std::to_string(m_options.max_bytes) + " bytes expected"));
      size += bytes.size();
      if (fan_out) {
        if (m_fanout.failed()) return std::unexpected(step_error());  // stop early: it cannot succeed now
        m_fanout.put(bytes);
        return {};
      }
      for (std::size_t i = 0; i < steps.size(); ++i)
        if (!steps[i](bytes)) return std::unexpected(step_error());
      return {};
    };
    for (;;) {
      // libarchive's own buffer (no copy); `offset` skips the holes of a
      // sparse entry, written out as zeros (an artifact has no holes).
      const void* data = nullptr;
      std::size_t length = 0;
      la_int64_t offset = 0;
      const int rc = archive_read_data_block(in, &data, &length, &offset);
      if (rc == ARCHIVE_EOF) break;
      std::expected<void, Error> ok;
      if (rc < ARCHIVE_WARN || offset < 0 || static_cast<std::uint64_t>(offset) < size)
        ok = std::unexpected(invalid_error("archive entry '" + name + "' is damaged: " +
                                           (rc < ARCHIVE_WARN ? archive_error_string(in) : "bad block offset")));
      while (ok && size < static_cast<std::uint64_t>(offset)) {
        const auto gap = std::min<std::uint64_t>(static_cast<std::uint64_t>(offset) - size, m_zeros.size());
        ok = put(std::span<const std::byte>(m_zeros.data(), static_cast<std::size_t>(gap)));
      }
      if (ok) ok = put(std::span<const std::byte>(static_cast<const std::byte*>(data), length));
      if (!ok) return std::unexpected(ok.error());
    }
    const auto& steps_ok = joined.end();
    if (std::find(steps_ok.begin(), steps_ok.end(), false) != steps_ok.end()) return std::unexpected(step_error());
    if (chunk_check)  // every lane succeeded; the chunks must also all have arrived
      if (std::string problem = chunk_check->problem(); !problem.empty())
        return std::unexpected(invalid_error("refused archive entry '" + name + "': " + problem));
    for (std::size_t t = 0; t < out.fds.size(); ++t) {
      const bool ok = ::fchmod(out.fds[t], perm) == 0 && (t > 0 || !m_options.sync || ::fsync(out.fds[t]) == 0);
      const int fd = std::exchange(out.fds[t], -1);
      if (::close(fd) != 0 || !ok) return std::unexpected(io_error(errno_message("writing", m_roots[t] / rel)));
    }
    std::string sha256 = chunk_check ? signed_file->sha256 : m_options.hash ? hasher.digest().hex() : std::string();
    files.push_back({name, size, std::move(sha256), perm, chunk_check.has_value()});
    return {};
  }

  std::vector<fs::path> m_roots;
  const UnpackOptions& m_options;
  BlockFanout m_fanout;
  std::uint64_t m_total = 0;
  std::vector<Dir> m_dirs;
  std::vector<std::byte> m_zeros = std::vector<std::byte>(64 << 10);
};

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
    if (!write_all(fd, bytes)) {
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
  unpacker.finish();
  if (options.check)
    if (auto ok = options.check(unpacker.files); !ok) return std::unexpected(ok.error());
  if (auto committed = commit_tree(temp, target, options.sync); !committed) return std::unexpected(committed.error());
  if (!options.mirror.empty())
    if (auto committed = commit_tree(mirror_temp, mirror_target, false); !committed)
      return std::unexpected(committed.error());
  return std::move(unpacker.files);
}

std::unique_ptr<archive, ReadFree> new_reader() {
  std::unique_ptr<archive, ReadFree> in(archive_read_new());
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

bool ArchivePipe::hand_over(std::unique_lock<std::mutex>& lock) {
  m_changed.wait(lock, [&] { return m_closed || m_queue.size() < k_max_queued; });
  if (m_closed) return false;
  m_queue.push_back(std::move(m_filling));
  m_filling = {};
  if (!m_spare.empty()) {
    m_filling = std::move(m_spare.back());
    m_spare.pop_back();
  }
  m_changed.notify_all();
  return true;
}

bool ArchivePipe::push(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    if (m_filling.capacity() < k_block) m_filling.reserve(k_block);
    const std::size_t n = std::min(bytes.size(), k_block - m_filling.size());
    m_filling.insert(m_filling.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    bytes = bytes.subspan(n);
    if (m_filling.size() == k_block) {
      std::unique_lock lock(m_mutex);
      if (!hand_over(lock)) return false;
    }
  }
  std::lock_guard lock(m_mutex);
  return !m_closed;
}

void ArchivePipe::finish() {
  std::unique_lock lock(m_mutex);
  if (!m_filling.empty()) hand_over(lock);
  m_finished = true;
  m_changed.notify_all();
}

void ArchivePipe::fail(Error error) {
  std::lock_guard lock(m_mutex);
  m_failure = std::move(error);
  m_finished = true;
  m_changed.notify_all();
}

void ArchivePipe::close() {
  std::lock_guard lock(m_mutex);
  m_closed = true;
  m_changed.notify_all();
}

std::expected<std::span<const std::byte>, Error> ArchivePipe::next() {
  std::unique_lock lock(m_mutex);
  if (!m_reading.empty() || m_reading.capacity() > 0) {
    m_reading.clear();
    m_spare.push_back(std::move(m_reading));
    m_reading = {};
  }
  m_changed.wait(lock, [&] { return !m_queue.empty() || m_finished; });
  if (m_queue.empty()) {
    if (m_failure) return std::unexpected(*m_failure);
    return std::span<const std::byte>();
  }
  m_reading = std::move(m_queue.front());
  m_queue.pop_front();
  m_changed.notify_all();
  return std::span<const std::byte>(m_reading);
}

bool ArchivePipe::drain() {
  for (;;) {
    auto bytes = next();
    if (!bytes) return false;
    if (bytes->empty()) return true;
  }
}

}  // namespace orc::cache
