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
#include <memory>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/cache/pack_names.hpp"
#include "orchestrator/inspect/sha256.hpp"
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

class Unpacker {
 public:
  Unpacker(fs::path root, const UnpackOptions& options) : m_root(std::move(root)), m_options(options) {}

  std::expected<void, Error> entry(archive* in, archive_entry* e) {
    const char* raw = archive_entry_pathname(e);
    const std::string name = raw ? raw : "";
    const auto refuse = [&](const std::string& why) {
      return std::unexpected(invalid_error("refused archive entry '" + name + "': " + why));
    };
    const auto parts = split_safe_name(name);
    if (!parts) return refuse(name.starts_with("/") ? "absolute path" : "'..' component or empty name");
    fs::path at = m_root;
    for (std::size_t i = 0; i + 1 < parts->size(); ++i) {
      at /= (*parts)[i];
      struct stat st {};
      if (::lstat(at.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) return refuse("it goes through the symlink '" + (*parts)[i] + "'");
        if (!S_ISDIR(st.st_mode)) return refuse("'" + (*parts)[i] + "' is not a directory");
      } else if (::mkdir(at.c_str(), 0755) != 0) {
        return std::unexpected(io_error(errno_message("creating", at)));
      }
    }
    at /= parts->back();
    const mode_t type = archive_entry_filetype(e);
    struct stat existing {};
    const bool exists = ::lstat(at.c_str(), &existing) == 0;
    if (exists && !(type == AE_IFDIR && S_ISDIR(existing.st_mode))) return refuse("it appears twice");
    const mode_t perm = archive_entry_perm(e) & 0777;
    if (const char* hard = archive_entry_hardlink(e)) return hardlink(at, hard, refuse);
    switch (type) {
      case AE_IFDIR:
        if (!exists && ::mkdir(at.c_str(), 0700) != 0) return std::unexpected(io_error(errno_message("creating", at)));
        m_dirs.push_back({at, perm | 0700});  // modes last, so a read-only directory can still be filled
        return {};
      case AE_IFREG:
        return file(in, at, name, perm);
      case AE_IFLNK: {
        const char* target = archive_entry_symlink(e);
        if (!target || !symlink_stays_inside(target, parts->size() - 1))
          return refuse(std::string("symlink to '") + (target ? target : "") + "' points outside the directory");
        if (::symlink(target, at.c_str()) != 0) return std::unexpected(io_error(errno_message("creating", at)));
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

  template <typename Refuse>
  std::expected<void, Error> hardlink(const fs::path& at, std::string_view target, const Refuse& refuse) {
    const std::string why = "hardlink to '" + std::string(target) + "', which is not a file unpacked before it";
    const auto parts = split_safe_name(target);
    if (!parts) return refuse(why);
    fs::path source = m_root;
    struct stat st {};
    for (std::size_t i = 0; i < parts->size(); ++i) {
      source /= (*parts)[i];
      if (::lstat(source.c_str(), &st) != 0) return refuse(why);
      const bool last = i + 1 == parts->size();
      if (last ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)) return refuse(why);
    }
    if (::link(source.c_str(), at.c_str()) != 0) return std::unexpected(io_error(errno_message("linking", at)));
    return {};
  }

  std::expected<void, Error> file(archive* in, const fs::path& at, const std::string& name, mode_t perm) {
    const int fd = ::open(at.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return std::unexpected(io_error(errno_message("creating", at)));
    std::uint64_t size = 0;
    std::uint64_t flushed = 0;  // bytes handed to the disk
    inspect::Sha256 hasher;
    for (;;) {
      const la_ssize_t n = archive_read_data(in, m_buffer.data(), m_buffer.size());
      if (n < 0) {
        ::close(fd);
        return std::unexpected(invalid_error("archive entry '" + name + "' is damaged: " + archive_error_string(in)));
      }
      if (n == 0) break;
      if (m_options.hash)
        hasher.update({reinterpret_cast<const std::byte*>(m_buffer.data()), static_cast<std::size_t>(n)});
      for (la_ssize_t done = 0; done < n;) {
        const ssize_t w = ::write(fd, m_buffer.data() + done, static_cast<std::size_t>(n - done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          ::close(fd);
          return std::unexpected(io_error(errno_message("writing", at)));
        }
        done += w;
      }
      size += static_cast<std::uint64_t>(n);
      // A file to be fsynced is handed to the disk as it is written, so the
      // fsync at the end waits for the last few MiB, not the whole file.
      if (m_options.sync && size - flushed >= k_writeback_bytes) {
        ::sync_file_range(fd, static_cast<off_t>(flushed), static_cast<off_t>(size - flushed), SYNC_FILE_RANGE_WRITE);
        flushed = size;
      }
    }
    const bool ok = ::fchmod(fd, perm) == 0 && (!m_options.sync || ::fsync(fd) == 0);
    if (::close(fd) != 0 || !ok) return std::unexpected(io_error(errno_message("writing", at)));
    files.push_back({name, size, m_options.hash ? hasher.hex_digest() : std::string(), perm});
    return {};
  }

  fs::path m_root;
  UnpackOptions m_options;
  std::vector<Dir> m_dirs;
  std::vector<char> m_buffer = std::vector<char>(k_buffer_bytes);
};

bool is_empty_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec) && !ec;
}

// The private temporary directory beside `dir_in` (which must not exist, or
// be empty) that is filled and then renamed to `target`.
std::expected<void, Error> begin_tree(const fs::path& dir_in, fs::path& target, TempTree& temp) {
  const fs::path dir = fs::absolute(dir_in).lexically_normal();
  target = dir.has_filename() ? dir : dir.parent_path();
  std::error_code ec;
  if (fs::symlink_status(target, ec).type() != fs::file_type::not_found && !is_empty_dir(target))
    return std::unexpected(
        invalid_error(target.string() + " exists and is not an empty directory; unpack needs a new one"));
  fs::create_directories(target.parent_path(), ec);
  std::string pattern = (target.parent_path() / ("." + target.filename().string() + ".unpack-XXXXXX")).string();
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

// Copies `source` to the new file `fd` in the kernel (copy_file_range: no
// trip through user space, a reflink where the file system shares extents),
// falling back to read/write where it is refused.
std::expected<void, Error> copy_into(const fs::path& source, int fd, const fs::path& at) {
  const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return std::unexpected(io_error(errno_message("reading", source)));
  bool ok = true;
  for (;;) {
    const ssize_t n = ::copy_file_range(in, nullptr, fd, nullptr, k_buffer_bytes, 0);
    if (n > 0) continue;
    if (n == 0) break;
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
      ok = false;
      break;
    }
    std::vector<char> buffer(k_buffer_bytes);
    for (;;) {
      const ssize_t r = ::read(in, buffer.data(), buffer.size());
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        ok = r == 0;
        break;
      }
      for (ssize_t done = 0; done < r && ok;) {
        const ssize_t w = ::write(fd, buffer.data() + done, static_cast<std::size_t>(r - done));
        if (w < 0 && errno == EINTR) continue;
        ok = w > 0;
        done += w > 0 ? w : 0;
      }
      if (!ok) break;
    }
    break;
  }
  ::close(in);
  if (!ok) return std::unexpected(io_error(errno_message("writing", at)));
  return {};
}

}  // namespace

std::expected<void, Error> place_files(const std::vector<PlacedFile>& files, const fs::path& dir_in) {
  fs::path target;
  TempTree temp;
  if (auto begun = begin_tree(dir_in, target, temp); !begun) return begun;
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
    auto copied = copy_into(f.source, fd, at);
    const bool ok = ::fchmod(fd, f.mode & 0777) == 0;
    if (::close(fd) != 0 || !ok) return std::unexpected(io_error(errno_message("writing", at)));
    if (!copied) return copied;
  }
  return commit_tree(temp, target, false);
}

std::expected<std::vector<UnpackedFile>, Error> unpack(const fs::path& archive_path, const fs::path& dir_in) {
  return unpack(archive_path, dir_in, {});
}

std::expected<std::vector<UnpackedFile>, Error> unpack(const fs::path& archive_path, const fs::path& dir_in,
                                                       const UnpackOptions& options) {
  fs::path target;
  TempTree temp;
  if (auto begun = begin_tree(dir_in, target, temp); !begun) return std::unexpected(begun.error());

  std::unique_ptr<archive, ReadFree> in(archive_read_new());
  archive_read_support_filter_all(in.get());
  archive_read_support_format_tar(in.get());
  if (archive_read_open_filename(in.get(), archive_path.c_str(), k_buffer_bytes) != ARCHIVE_OK)
    return std::unexpected(io_error(archive_path.string() + ": " + archive_error_string(in.get())));
  Unpacker unpacker(temp.path, options);
  archive_entry* e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(in.get(), &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
    if (auto ok = unpacker.entry(in.get(), e); !ok) return std::unexpected(ok.error());
  }
  if (rc != ARCHIVE_EOF)
    return std::unexpected(invalid_error(archive_path.string() + " is damaged: " + archive_error_string(in.get())));
  unpacker.finish();
  if (auto committed = commit_tree(temp, target, options.sync); !committed) return std::unexpected(committed.error());
  return std::move(unpacker.files);
}

}  // namespace orc::cache
