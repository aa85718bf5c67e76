#include "orchestrator/engine/source_tar.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace orc::engine {

namespace {

namespace fs = std::filesystem;

struct WriteFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

Error io_error(const std::string& what) { return Error{.kind = ErrorKind::io, .message = what}; }

bool under_git(const fs::path& relative) {
  return std::ranges::any_of(relative, [](const fs::path& part) { return part == ".git"; });
}

}  // namespace

std::expected<std::uint64_t, Error> write_source_tar(const fs::path& dir, const fs::path& tar) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::unexpected(io_error("source " + dir.string() + " is not a directory"));
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(dir);
    if (under_git(rel)) {
      if (it->is_directory() && !it->is_symlink()) it.disable_recursion_pending();
      continue;
    }
    names.push_back(rel.generic_string());
  }
  if (ec) return std::unexpected(io_error("reading " + dir.string() + ": " + ec.message()));
  std::ranges::sort(names);

  std::unique_ptr<archive, WriteFree> out(archive_write_new());
  archive_write_set_format_pax_restricted(out.get());
  if (archive_write_open_filename(out.get(), tar.c_str()) != ARCHIVE_OK)
    return std::unexpected(io_error(tar.string() + ": " + archive_error_string(out.get())));
  std::vector<char> buffer(256 * 1024);
  for (const std::string& name : names) {
    const fs::path path = dir / name;
    const fs::file_status status = fs::symlink_status(path, ec);
    if (ec) return std::unexpected(io_error(path.string() + ": " + ec.message()));
    std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_mtime(e.get(), 0, 0);
    std::uintmax_t size = 0;
    switch (status.type()) {
      case fs::file_type::directory:
        archive_entry_set_filetype(e.get(), AE_IFDIR);
        archive_entry_set_perm(e.get(), 0755);
        break;
      case fs::file_type::symlink: {
        const fs::path target = fs::read_symlink(path, ec);
        if (ec) return std::unexpected(io_error(path.string() + ": " + ec.message()));
        archive_entry_set_filetype(e.get(), AE_IFLNK);
        archive_entry_set_perm(e.get(), 0777);
        archive_entry_set_symlink(e.get(), target.c_str());
        break;
      }
      case fs::file_type::regular:
        size = fs::file_size(path, ec);
        if (ec) return std::unexpected(io_error(path.string() + ": " + ec.message()));
        archive_entry_set_filetype(e.get(), AE_IFREG);
        archive_entry_set_perm(e.get(),
                               (status.permissions() & fs::perms::owner_exec) != fs::perms::none ? 0755 : 0644);
        archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
        break;
      default:
        return std::unexpected(
            Error{.kind = ErrorKind::invalid_spec,
                  .message = "source " + dir.string() + ": '" + name + "' is not a file, directory or symlink"});
    }
    if (archive_write_header(out.get(), e.get()) != ARCHIVE_OK)
      return std::unexpected(io_error(tar.string() + ": " + archive_error_string(out.get())));
    if (status.type() != fs::file_type::regular) continue;
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
    // A file that shrank while it was read would leave a short entry.
    if (left != 0) return std::unexpected(io_error(path.string() + ": changed while being read"));
  }
  if (archive_write_close(out.get()) != ARCHIVE_OK)
    return std::unexpected(io_error(tar.string() + ": " + archive_error_string(out.get())));
  return names.size();
}

}  // namespace orc::engine
