// One archive entry at a time: checked by tarsafe's rules (see pack.hpp),
// created in every tree. The trees are this process's own (mkdtemp, 0700),
// so what the rules know of the entries before is what the trees hold.
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
#include "orchestrator/tarsafe/archive_entry.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

// With UnpackOptions::admit, only the files of the signed manifest: their
// mode as admitted, or nullopt for a directory (made for its files).
std::expected<std::optional<mode_t>, Error> admit(const UnpackOptions& options, archive_entry* e,
                                                  const tarsafe::Entry& entry, const std::string& path) {
  const std::string name(entry.name);
  if (entry.kind != tarsafe::Kind::file && entry.kind != tarsafe::Kind::directory)
    return std::unexpected(refusal(name, "only the files of the signed manifest are accepted, not links or devices"));
  if (entry.kind == tarsafe::Kind::directory) return std::nullopt;
  if (!archive_entry_size_is_set(e) || archive_entry_size(e) < 0)
    return std::unexpected(refusal(name, "it has no size"));
  auto admitted = options.admit(path, entry.size, entry.mode & 07777);
  if (!admitted) return std::unexpected(refusal(name, admitted.error().message));
  return static_cast<mode_t>(*admitted & 0777);
}

Error refused(const tarsafe::Refusal& refused) { return refusal(refused.entry, "it " + refused.reason); }

}  // namespace

Error refusal(const std::string& name, const std::string& why) {
  return invalid_error("refused archive entry '" + name + "': " + why);
}

std::expected<void, Error> Unpacker::entry(archive* in, archive_entry* e) {
  const tarsafe::Entry entry = tarsafe::entry_of(e);
  const std::string name(entry.name);
  const auto accepted = m_rules.check(entry);
  if (!accepted) return std::unexpected(refused(accepted.error()));
  if (accepted->path.empty()) return {};  // the root entry ("./"): the tree itself
  mode_t perm = accepted->perm;
  if (m_options.admit) {
    const auto admitted = admit(m_options, e, entry, accepted->path);
    if (!admitted) return std::unexpected(admitted.error());
    if (!*admitted) return {};
    perm = **admitted;
  }
  if (auto made = make_parents(util::split_any(accepted->path, "/")); !made) return made;
  const fs::path rel = accepted->path;
  if (entry.kind == tarsafe::Kind::directory) return directory(rel, perm);
  if (entry.kind == tarsafe::Kind::file)
    return file(in, rel, name, perm, archive_entry_size_is_set(e) ? archive_entry_size(e) : 0);
  if (entry.kind == tarsafe::Kind::symlink) return symlink(rel, accepted->link);
  return hardlink(rel, accepted->link);  // the one other kind the rules accept
}

std::expected<void, Error> Unpacker::finish() {
  if (auto whole = m_rules.finish(); !whole) return std::unexpected(refused(whole.error()));
  // Deepest first, so making a parent read-only never blocks a child.
  std::ranges::sort(m_dirs, std::greater{}, &Dir::path);
  for (const auto& d : m_dirs) ::chmod(d.path.c_str(), d.mode);
  return {};
}

std::expected<void, Error> Unpacker::make_parents(const std::vector<std::string>& parts) {
  fs::path rel;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    rel /= parts[i];
    const fs::path at = m_roots[0] / rel;
    struct stat st {};
    // Anything there but a directory fails the mkdir below: the rules
    // accept no entry below a link or a file, and the trees are our own.
    if (::lstat(at.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    for (const auto& root : m_roots)
      if (::mkdir((root / rel).c_str(), 0755) != 0) return std::unexpected(io_error(errno_message("creating", at)));
  }
  return {};
}

std::expected<void, Error> Unpacker::directory(const fs::path& rel, mode_t perm) {
  struct stat st {};
  if (::lstat((m_roots[0] / rel).c_str(), &st) == 0) return {};  // made for an earlier entry
  for (const auto& root : m_roots) {
    if (::mkdir((root / rel).c_str(), 0700) != 0)
      return std::unexpected(io_error(errno_message("creating", m_roots[0] / rel)));
    // Modes last, so a read-only directory can still be filled.
    m_dirs.push_back({root / rel, perm});
  }
  return {};
}

std::expected<void, Error> Unpacker::symlink(const fs::path& rel, const std::string& target) {
  for (const auto& root : m_roots)
    if (::symlink(target.c_str(), (root / rel).c_str()) != 0)
      return std::unexpected(io_error(errno_message("creating", root / rel)));
  return {};
}

std::expected<void, Error> Unpacker::hardlink(const fs::path& rel, const std::string& target) {
  for (const auto& root : m_roots)
    if (::link((root / target).c_str(), (root / rel).c_str()) != 0)
      return std::unexpected(io_error(errno_message("linking", root / rel)));
  return {};
}

}  // namespace orc::cache
