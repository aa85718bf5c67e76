// Deterministic tar + zstd of an artifact set (see pack.hpp).
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <set>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/tarsafe/archive_handle.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/cache/pack_names.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

std::expected<void, Error> write_entry(archive* out, const PackEntry& entry) {
  struct stat st {};
  if (::lstat(entry.source.c_str(), &st) != 0) return std::unexpected(io_error(errno_message("reading", entry.source)));
  const tarsafe::ArchiveEntry e = tarsafe::new_archive_entry();
  archive_entry_set_pathname(e.get(), entry.name.c_str());
  archive_entry_set_uid(e.get(), 0);
  archive_entry_set_gid(e.get(), 0);
  archive_entry_set_mtime(e.get(), 0, 0);
  std::string link;
  if (S_ISLNK(st.st_mode)) {
    link.resize(4096);
    const ssize_t n = ::readlink(entry.source.c_str(), link.data(), link.size());
    if (n < 0) return std::unexpected(io_error(errno_message("reading the link", entry.source)));
    link.resize(static_cast<std::size_t>(n));
    archive_entry_set_filetype(e.get(), AE_IFLNK);
    archive_entry_set_perm(e.get(), 0777);
    archive_entry_set_symlink(e.get(), link.c_str());
  } else if (S_ISREG(st.st_mode)) {
    archive_entry_set_filetype(e.get(), AE_IFREG);
    // setuid/setgid/sticky never travel: an artifact has no business with them.
    archive_entry_set_perm(e.get(), entry.mode.value_or(st.st_mode) & 0777);
    archive_entry_set_size(e.get(), st.st_size);
  } else {
    return std::unexpected(invalid_error(entry.source.string() + " is neither a file nor a symlink; cannot pack it"));
  }
  if (archive_write_header(out, e.get()) != ARCHIVE_OK)
    return std::unexpected(io_error(entry.name + ": " + archive_error_string(out)));
  if (!S_ISREG(st.st_mode)) return {};
  const int fd = ::open(entry.source.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(io_error(errno_message("opening", entry.source)));
  std::vector<char> buffer(1 << 20);
  std::int64_t left = st.st_size;
  while (left > 0) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return std::unexpected(io_error(entry.source.string() + " changed or failed while packing it"));
    }
    if (archive_write_data(out, buffer.data(), static_cast<std::size_t>(n)) != n) {
      ::close(fd);
      return std::unexpected(io_error(entry.name + ": " + archive_error_string(out)));
    }
    left -= n;
  }
  ::close(fd);
  return {};
}

}  // namespace

std::expected<void, Error> pack(std::vector<PackEntry> entries, const fs::path& out_path) {
  std::ranges::sort(entries, {}, &PackEntry::name);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!split_safe_name(entries[i].name))
      return std::unexpected(
          invalid_error("cannot pack '" + entries[i].name + "': not a relative name inside the set"));
    if (i > 0 && entries[i].name == entries[i - 1].name)
      return std::unexpected(invalid_error("cannot pack '" + entries[i].name + "' twice"));
  }
  std::error_code ec;
  const fs::path dir = out_path.parent_path().empty() ? fs::path(".") : out_path.parent_path();
  const fs::path temp = temp_name(dir, "." + out_path.filename().string());
  tarsafe::WriteArchive out = tarsafe::new_write_archive();
  archive_write_set_format_pax_restricted(out.get());
  archive_write_add_filter_zstd(out.get());
  if (archive_write_open_filename(out.get(), temp.c_str()) != ARCHIVE_OK)
    return std::unexpected(io_error(temp.string() + ": " + archive_error_string(out.get())));
  for (const auto& entry : entries) {
    if (auto ok = write_entry(out.get(), entry); !ok) {
      out.reset();
      fs::remove(temp, ec);
      return ok;
    }
  }
  const bool closed = archive_write_close(out.get()) == ARCHIVE_OK;
  const std::string why = closed ? "" : archive_error_string(out.get());
  out.reset();
  const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  const bool synced = fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!closed || !synced || ::rename(temp.c_str(), out_path.c_str()) != 0) {
    const std::string message = closed ? errno_message("writing", out_path) : out_path.string() + ": " + why;
    fs::remove(temp, ec);
    return std::unexpected(io_error(message));
  }
  fsync_dir(dir);
  return {};
}

std::expected<std::vector<PackMember>, Error> list_pack(const fs::path& archive_path, std::size_t max_members) {
  const tarsafe::ReadArchive in = tarsafe::new_read_archive();
  archive_read_support_filter_zstd(in.get());
  archive_read_support_format_tar(in.get());
  const auto damaged = [&](const std::string& why) {
    return std::unexpected(invalid_error(archive_path.string() + ": not a readable tar+zstd: " + why));
  };
  const auto why = [&] {
    const char* text = archive_error_string(in.get());
    return std::string(text ? text : "unknown error");
  };
  if (archive_read_open_filename(in.get(), archive_path.c_str(), 1 << 20) != ARCHIVE_OK) return damaged(why());
  std::vector<PackMember> members;
  archive_entry* e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(in.get(), &e)) == ARCHIVE_OK) {
    if (members.size() == max_members) return damaged("more than " + std::to_string(max_members) + " members");
    members.push_back({.name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "",
                       .size = static_cast<std::uint64_t>(std::max<la_int64_t>(archive_entry_size(e), 0)),
                       .mode = static_cast<unsigned>(archive_entry_perm(e)) & 0777u,
                       .regular = archive_entry_filetype(e) == AE_IFREG});
    if (archive_read_data_skip(in.get()) != ARCHIVE_OK) return damaged(why());
  }
  if (rc != ARCHIVE_EOF) return damaged(why());
  return members;
}

}  // namespace orc::cache
