// Build contexts as tars for POST /build.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <system_error>
#include <vector>

#include "orchestrator/engine/archive.hpp"

namespace orc::engine {

namespace {

namespace fs = std::filesystem;

struct WriteCloser {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryCloser {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

Error io_error(const std::string& what) { return Error{.kind = ErrorKind::io, .message = what}; }

}  // namespace

std::expected<std::uint64_t, Error> write_context_tar(const fs::path& dir, const fs::path& tar) {
  std::error_code ec;
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    paths.push_back(it->path());
  if (ec) return std::unexpected(io_error("reading build context " + dir.string() + ": " + ec.message()));
  // Sorted, so the same tree always makes the same tar (and the engine's
  // build cache sees the same context).
  std::sort(paths.begin(), paths.end());

  std::unique_ptr<archive, WriteCloser> out(archive_write_new());
  archive_write_set_format_pax_restricted(out.get());
  if (archive_write_open_filename(out.get(), tar.c_str()) != ARCHIVE_OK)
    return std::unexpected(io_error(tar.string() + ": " + archive_error_string(out.get())));

  std::uint64_t count = 0;
  std::vector<char> buffer(256 * 1024);
  for (const fs::path& path : paths) {
    const fs::file_status status = fs::symlink_status(path, ec);
    if (ec) return std::unexpected(io_error(path.string() + ": " + ec.message()));
    const std::string name = path.lexically_relative(dir).generic_string();
    std::unique_ptr<archive_entry, EntryCloser> e(archive_entry_new());
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_perm(e.get(), static_cast<mode_t>(status.permissions()) & 07777);
    if (status.type() != fs::file_type::symlink) {
      const auto mtime = std::chrono::file_clock::to_sys(fs::last_write_time(path, ec));
      if (!ec) archive_entry_set_mtime(e.get(), std::chrono::system_clock::to_time_t(mtime), 0);
      ec.clear();
    }
    std::uintmax_t size = 0;
    switch (status.type()) {
      case fs::file_type::directory:
        archive_entry_set_filetype(e.get(), AE_IFDIR);
        break;
      case fs::file_type::symlink: {
        const fs::path target = fs::read_symlink(path, ec);
        if (ec) return std::unexpected(io_error(path.string() + ": " + ec.message()));
        archive_entry_set_filetype(e.get(), AE_IFLNK);
        archive_entry_set_symlink(e.get(), target.c_str());
        break;
      }
      case fs::file_type::regular:
        size = fs::file_size(path, ec);
        if (ec) return std::unexpected(io_error(path.string() + ": " + ec.message()));
        archive_entry_set_filetype(e.get(), AE_IFREG);
        archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
        break;
      default:
        return std::unexpected(
            Error{.kind = ErrorKind::invalid_spec,
                  .message = "build context " + dir.string() + ": '" + name + "' is not a file, directory or symlink"});
    }
    if (archive_write_header(out.get(), e.get()) != ARCHIVE_OK)
      return std::unexpected(io_error(tar.string() + ": " + archive_error_string(out.get())));
    if (status.type() == fs::file_type::regular) {
      std::ifstream in(path, std::ios::binary);
      std::uintmax_t left = size;
      while (left > 0 && in) {
        in.read(buffer.data(), static_cast<std::streamsize>(std::min<std::uintmax_t>(buffer.size(), left)));
        const auto got = in.gcount();
        if (got <= 0) break;
        if (archive_write_data(out.get(), buffer.data(), static_cast<size_t>(got)) < 0)
          return std::unexpected(io_error(tar.string() + ": " + archive_error_string(out.get())));
        left -= static_cast<std::uintmax_t>(got);
      }
      // A file that shrank while we read it would leave a short entry.
      if (left != 0) return std::unexpected(io_error(path.string() + ": changed while being read"));
    }
    ++count;
  }
  if (archive_write_close(out.get()) != ARCHIVE_OK)
    return std::unexpected(io_error(tar.string() + ": " + archive_error_string(out.get())));
  return count;
}

}  // namespace orc::engine
