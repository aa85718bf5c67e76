// One archive entry at a time (see pack.hpp for the rules): checked against
// the first tree, created in every tree. The trees are this process's own
// (mkdtemp, 0700), so a check made with lstat still holds when the entry is
// created.
#include "orchestrator/cache/unpacker.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/pack_names.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

std::string refused_type(mode_t type) {
  switch (type) {
    case AE_IFCHR:
      return "character device";
    case AE_IFBLK:
      return "block device";
    case AE_IFIFO:
      return "fifo";
    case AE_IFSOCK:
      return "socket";
    default:
      return "unknown entry type";
  }
}

// With UnpackOptions::admit, only the files of the signed manifest: their
// mode as admitted, or nullopt for a directory (made for its files).
std::expected<std::optional<mode_t>, Error> admit(const UnpackOptions& options, archive_entry* e,
                                                  const std::vector<std::string>& parts, const std::string& name) {
  const mode_t kind = archive_entry_filetype(e);
  if (archive_entry_hardlink(e) || (kind != AE_IFREG && kind != AE_IFDIR))
    return std::unexpected(refusal(name, "only the files of the signed manifest are accepted, not links or devices"));
  if (kind == AE_IFDIR) return std::nullopt;
  const la_int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
  if (size < 0) return std::unexpected(refusal(name, "it has no size"));
  auto admitted = options.admit(util::join(parts, "/"), static_cast<std::uint64_t>(size),
                                static_cast<unsigned>(archive_entry_perm(e) & 07777));
  if (!admitted) return std::unexpected(refusal(name, admitted.error().message));
  return static_cast<mode_t>(*admitted & 0777);
}

}  // namespace

Error refusal(const std::string& name, const std::string& why) {
  return invalid_error("refused archive entry '" + name + "': " + why);
}

std::expected<void, Error> Unpacker::entry(archive* in, archive_entry* e) {
  const char* raw = archive_entry_pathname(e);
  const std::string name = raw ? raw : "";
  const auto parts = split_safe_name(name);
  if (!parts)
    return std::unexpected(refusal(name, name.starts_with("/") ? "absolute path" : "'..' component or empty name"));
  mode_t perm = archive_entry_perm(e) & 0777;
  if (m_options.admit) {
    const auto admitted = admit(m_options, e, *parts, name);
    if (!admitted) return std::unexpected(admitted.error());
    if (!*admitted) return {};
    perm = **admitted;
  }
  if (auto made = make_parents(*parts, name); !made) return made;
  fs::path rel;
  for (const auto& part : *parts) rel /= part;
  const mode_t type = archive_entry_filetype(e);
  struct stat existing {};
  const bool exists = ::lstat((m_roots[0] / rel).c_str(), &existing) == 0;
  if (exists && !(type == AE_IFDIR && S_ISDIR(existing.st_mode)))
    return std::unexpected(refusal(name, "it appears twice"));
  if (const char* hard = archive_entry_hardlink(e)) return hardlink(rel, hard, name);
  switch (type) {
    case AE_IFDIR:
      return directory(rel, perm, exists);
    case AE_IFREG:
      return file(in, rel, name, perm, archive_entry_size_is_set(e) ? archive_entry_size(e) : 0);
    case AE_IFLNK:
      return symlink(rel, archive_entry_symlink(e), parts->size() - 1, name);
    default:
      return std::unexpected(refusal(name, refused_type(type)));
  }
}

void Unpacker::finish() {
  // Deepest first, so making a parent read-only never blocks a child.
  std::ranges::sort(m_dirs, std::greater{}, &Dir::path);
  for (const auto& d : m_dirs) ::chmod(d.path.c_str(), d.mode);
}

std::expected<void, Error> Unpacker::make_parents(const std::vector<std::string>& parts, const std::string& name) {
  fs::path rel;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    rel /= parts[i];
    const fs::path at = m_roots[0] / rel;
    struct stat st {};
    if (::lstat(at.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) return std::unexpected(refusal(name, "it goes through the symlink '" + parts[i] + "'"));
      if (!S_ISDIR(st.st_mode)) return std::unexpected(refusal(name, "'" + parts[i] + "' is not a directory"));
      continue;
    }
    for (const auto& root : m_roots)
      if (::mkdir((root / rel).c_str(), 0755) != 0) return std::unexpected(io_error(errno_message("creating", at)));
  }
  return {};
}

std::expected<void, Error> Unpacker::directory(const fs::path& rel, mode_t perm, bool exists) {
  if (exists) return {};
  for (const auto& root : m_roots) {
    if (::mkdir((root / rel).c_str(), 0700) != 0)
      return std::unexpected(io_error(errno_message("creating", m_roots[0] / rel)));
    // Modes last, so a read-only directory can still be filled; never
    // writable by others, whatever the archive says.
    m_dirs.push_back({root / rel, (perm & 0755) | 0700});
  }
  return {};
}

std::expected<void, Error> Unpacker::symlink(const fs::path& rel, const char* target, std::size_t depth,
                                             const std::string& name) {
  if (!target || !symlink_stays_inside(target, depth))
    return std::unexpected(
        refusal(name, std::string("symlink to '") + (target ? target : "") + "' points outside the directory"));
  for (const auto& root : m_roots)
    if (::symlink(target, (root / rel).c_str()) != 0)
      return std::unexpected(io_error(errno_message("creating", root / rel)));
  return {};
}

std::expected<void, Error> Unpacker::hardlink(const fs::path& rel, std::string_view target, const std::string& name) {
  const std::string why = "hardlink to '" + std::string(target) + "', which is not a file unpacked before it";
  const auto parts = split_safe_name(target);
  if (!parts) return std::unexpected(refusal(name, why));
  fs::path source;
  struct stat st {};
  for (std::size_t i = 0; i < parts->size(); ++i) {
    source /= (*parts)[i];
    if (::lstat((m_roots[0] / source).c_str(), &st) != 0) return std::unexpected(refusal(name, why));
    const bool last = i + 1 == parts->size();
    if (last ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)) return std::unexpected(refusal(name, why));
  }
  for (const auto& root : m_roots)
    if (::link((root / source).c_str(), (root / rel).c_str()) != 0)
      return std::unexpected(io_error(errno_message("linking", root / rel)));
  return {};
}

}  // namespace orc::cache
