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
#include "orchestrator/tarsafe/archive_handle.hpp"

namespace orc::engine {

namespace {

namespace fs = std::filesystem;

Error io_error(const std::string& what) { return Error{.kind = ErrorKind::io, .message = what}; }

}  // namespace

std::expected<std::uint64_t, Error> write_tree_tar(const fs::path& dir, const std::vector<std::string>& names,
                                                   const fs::path& tar, TarMetadata metadata, std::string_view what) {
  const tarsafe::WriteArchive out = tarsafe::new_write_archive();
  archive_write_set_format_pax_restricted(out.get());
  if (archive_write_open_filename(out.get(), tar.c_str()) != ARCHIVE_OK)
    return std::unexpected(io_error(tarsafe::error_text(out.get(), tar.string())));
  const bool kept = metadata == TarMetadata::kept;
  std::error_code ec;
  std::vector<char> buffer(256 * 1024);
  for (const std::string& name : names) {
    const fs::path path = dir / name;
    const fs::file_status status = fs::symlink_status(path, ec);
    if (ec) return std::unexpected(io_error(path.string() + ": " + ec.message()));
    const tarsafe::ArchiveEntry e = tarsafe::new_archive_entry();
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    if (!kept) archive_entry_set_mtime(e.get(), 0, 0);
    if (kept) {
      archive_entry_set_perm(e.get(), static_cast<mode_t>(status.permissions()) & 07777);
      if (status.type() != fs::file_type::symlink) {
        const auto mtime = std::chrono::file_clock::to_sys(fs::last_write_time(path, ec));
        if (!ec) archive_entry_set_mtime(e.get(), std::chrono::system_clock::to_time_t(mtime), 0);
        ec.clear();
      }
    }
    std::uintmax_t size = 0;
    switch (status.type()) {
      case fs::file_type::directory:
        archive_entry_set_filetype(e.get(), AE_IFDIR);
        if (!kept) archive_entry_set_perm(e.get(), 0755);
        break;
      case fs::file_type::symlink: {
        const fs::path target = fs::read_symlink(path, ec);
        if (ec) return std::unexpected(io_error(path.string() + ": " + ec.message()));
        archive_entry_set_filetype(e.get(), AE_IFLNK);
        if (!kept) archive_entry_set_perm(e.get(), 0777);
        archive_entry_set_symlink(e.get(), target.c_str());
        break;
      }
      case fs::file_type::regular:
        size = fs::file_size(path, ec);
        if (ec) return std::unexpected(io_error(path.string() + ": " + ec.message()));
        archive_entry_set_filetype(e.get(), AE_IFREG);
        if (!kept)
          archive_entry_set_perm(e.get(),
                                 (status.permissions() & fs::perms::owner_exec) != fs::perms::none ? 0755 : 0644);
        archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
        break;
      default:
        return std::unexpected(
            Error{.kind = ErrorKind::invalid_spec,
                  .message = std::string(what) + ": '" + name + "' is not a file, directory or symlink"});
    }
    if (archive_write_header(out.get(), e.get()) != ARCHIVE_OK)
      return std::unexpected(io_error(tarsafe::error_text(out.get(), tar.string())));
    if (status.type() != fs::file_type::regular) continue;
    std::ifstream in(path, std::ios::binary);
    std::uintmax_t left = size;
    while (left > 0 && in) {
      in.read(buffer.data(), static_cast<std::streamsize>(std::min<std::uintmax_t>(buffer.size(), left)));
      const auto got = in.gcount();
      if (got <= 0) break;
      if (archive_write_data(out.get(), buffer.data(), static_cast<size_t>(got)) < 0)
        return std::unexpected(io_error(tarsafe::error_text(out.get(), tar.string())));
      left -= static_cast<std::uintmax_t>(got);
    }
    // A file that shrank while it was read would leave a short entry.
    if (left != 0) return std::unexpected(io_error(path.string() + ": changed while being read"));
  }
  if (archive_write_close(out.get()) != ARCHIVE_OK)
    return std::unexpected(io_error(tarsafe::error_text(out.get(), tar.string())));
  return names.size();
}

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
  std::vector<std::string> names;
  names.reserve(paths.size());
  for (const fs::path& path : paths) names.push_back(path.lexically_relative(dir).generic_string());
  return write_tree_tar(dir, names, tar, TarMetadata::kept, "build context " + dir.string());
}

}  // namespace orc::engine
