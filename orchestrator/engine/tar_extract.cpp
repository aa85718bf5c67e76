// Safe extraction of untrusted tars (the rules are in archive.hpp): a first
// pass reads every header and checks the rules, a second pass writes.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "orchestrator/engine/archive.hpp"

namespace orc::engine {

namespace {

namespace fs = std::filesystem;

struct ReadCloser {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct WriteCloser {
  void operator()(archive* a) const { archive_write_free(a); }
};
using ReadArchive = std::unique_ptr<archive, ReadCloser>;
using WriteArchive = std::unique_ptr<archive, WriteCloser>;

// Symlink chains longer than this are treated as loops (Linux's own limit
// for a path lookup is 40).
constexpr int k_max_link_hops = 40;

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto slash = path.find('/', start);
    const auto end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string join_path(const std::vector<std::string>& parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i) out += '/';
    out += parts[i];
  }
  return out;
}

struct Entry {
  std::string path;  // normalized
  mode_t type = 0;
  std::string link;  // symlink target as stored, or normalized hard-link target
  bool hardlink = false;
};

Error unsafe(std::string_view entry, std::string_view why) {
  return Error{.kind = ErrorKind::unsafe_archive,
               .message = "refusing archive: entry '" + std::string(entry) + "' " + std::string(why)};
}

Error corrupt(archive* a, const fs::path& tar) {
  const char* why = archive_error_string(a);
  return Error{.kind = ErrorKind::protocol,
               .message = "reading tar " + tar.string() + ": " + (why ? why : "not a tar archive")};
}

ReadArchive open_tar(const fs::path& tar) {
  ReadArchive a(archive_read_new());
  archive_read_support_format_tar(a.get());
  // A failed open shows up as an error from the first read_next_header.
  archive_read_open_filename(a.get(), tar.c_str(), 64 * 1024);
  return a;
}

enum class Resolution { inside, outside, loops };

// Follows `target` from the directory holding `link_path`, through the
// archive's own symlinks, the way the kernel would after extraction.
Resolution resolve_link(const std::string& link_path, const std::string& target,
                        const std::map<std::string, std::string>& links) {
  std::vector<std::string> where = split_path(link_path);
  where.pop_back();  // the link's directory
  std::vector<std::string> todo = split_path(target);
  std::reverse(todo.begin(), todo.end());  // a stack: back() is the next component
  int hops = 0;
  while (!todo.empty()) {
    const std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      if (where.empty()) return Resolution::outside;
      where.pop_back();
      continue;
    }
    where.push_back(part);
    const auto it = links.find(join_path(where, where.size()));
    if (it == links.end()) continue;
    if (++hops > k_max_link_hops) return Resolution::loops;
    if (it->second.starts_with('/')) return Resolution::outside;
    where.pop_back();
    auto more = split_path(it->second);
    todo.insert(todo.end(), more.rbegin(), more.rend());
  }
  return Resolution::inside;
}

std::expected<std::vector<Entry>, Error> check_entries(const fs::path& tar) {
  ReadArchive a = open_tar(tar);
  std::vector<Entry> entries;
  std::map<std::string, std::string> links;  // symlink path -> target
  std::map<std::string, mode_t> seen;        // path -> type
  archive_entry* e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK) {
    const char* raw = archive_entry_pathname(e);
    const std::string shown = raw ? raw : "";
    auto path = normalize_entry_path(shown);
    if (!path) return std::unexpected(unsafe(shown, path.error()));
    Entry entry{.path = *path, .type = archive_entry_filetype(e)};
    if (const char* hard = archive_entry_hardlink(e)) {
      auto target = normalize_entry_path(hard);
      if (!target) return std::unexpected(unsafe(shown, "is a hard link whose target " + target.error()));
      const auto it = seen.find(*target);
      if (it == seen.end() || it->second != AE_IFREG)
        return std::unexpected(unsafe(shown, "is a hard link to '" + *target + "', not an earlier regular file"));
      entry.hardlink = true;
      entry.link = *target;
      entry.type = AE_IFREG;
    } else if (entry.type == AE_IFLNK) {
      const char* target = archive_entry_symlink(e);
      entry.link = target ? target : "";
      if (entry.link.empty()) return std::unexpected(unsafe(shown, "is a symlink with an empty target"));
      if (entry.link.starts_with('/'))
        return std::unexpected(unsafe(shown, "is a symlink to an absolute path ('" + entry.link + "')"));
      links[entry.path] = entry.link;
    } else if (entry.type == AE_IFCHR || entry.type == AE_IFBLK) {
      return std::unexpected(unsafe(shown, "is a device file"));
    } else if (entry.type == AE_IFIFO || entry.type == AE_IFSOCK) {
      return std::unexpected(unsafe(shown, "is a FIFO or socket"));
    } else if (entry.type != AE_IFREG && entry.type != AE_IFDIR) {
      return std::unexpected(unsafe(shown, "has an unknown file type"));
    }
    if (entry.path.empty() && entry.type != AE_IFDIR)
      return std::unexpected(unsafe(shown, "names the destination itself"));
    if (const auto [it, fresh] = seen.emplace(entry.path, entry.type);
        !fresh && !(it->second == AE_IFDIR && entry.type == AE_IFDIR))
      return std::unexpected(unsafe(shown, "repeats an earlier entry's path"));
    entries.push_back(std::move(entry));
    archive_read_data_skip(a.get());
  }
  if (rc != ARCHIVE_EOF) return std::unexpected(corrupt(a.get(), tar));

  for (const Entry& entry : entries) {
    const auto parts = split_path(entry.path);
    for (std::size_t n = 1; n < parts.size(); ++n)
      if (links.contains(join_path(parts, n)))
        return std::unexpected(unsafe(entry.path, "lies below the archive's symlink '" + join_path(parts, n) + "'"));
    if (entry.type != AE_IFLNK || entry.hardlink) continue;
    switch (resolve_link(entry.path, entry.link, links)) {
      case Resolution::inside:
        break;
      case Resolution::outside:
        return std::unexpected(
            unsafe(entry.path, "is a symlink ('" + entry.link + "') that resolves outside the destination"));
      case Resolution::loops:
        return std::unexpected(unsafe(entry.path, "is a symlink ('" + entry.link + "') in a loop"));
    }
  }
  return entries;
}

}  // namespace

std::expected<std::string, std::string> normalize_entry_path(std::string_view raw) {
  if (raw.starts_with('/')) return std::unexpected("has an absolute path");
  std::vector<std::string> kept;
  for (auto& part : split_path(raw)) {
    if (part == "..") return std::unexpected("has a '..' component");
    if (part != ".") kept.push_back(std::move(part));
  }
  return join_path(kept, kept.size());
}

std::expected<ExtractStats, Error> extract_tar(const fs::path& tar, const fs::path& dest) {
  auto entries = check_entries(tar);
  if (!entries) return std::unexpected(entries.error());

  std::error_code ec;
  fs::create_directories(dest, ec);
  // libarchive's symlink check walks every component of the path it writes,
  // so the destination itself must be spelled without symlinks.
  const fs::path root = ec ? fs::path() : fs::canonical(dest, ec);
  if (ec) return std::unexpected(Error{.kind = ErrorKind::io, .message = dest.string() + ": " + ec.message()});

  ReadArchive in = open_tar(tar);
  WriteArchive out(archive_write_disk_new());
  archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                                ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  ExtractStats stats;
  archive_entry* e = nullptr;
  for (const Entry& entry : *entries) {
    if (archive_read_next_header(in.get(), &e) != ARCHIVE_OK) return std::unexpected(corrupt(in.get(), tar));
    if (entry.path.empty()) continue;  // the root entry: dest already exists
    archive_entry_set_pathname(e, (root / entry.path).c_str());
    if (entry.hardlink) archive_entry_set_hardlink(e, (root / entry.link).c_str());
    const auto write_error = [&] {
      const char* why = archive_error_string(out.get());
      return Error{.kind = ErrorKind::io, .message = "extracting '" + entry.path + "': " + (why ? why : "failed")};
    };
    if (archive_write_header(out.get(), e) < ARCHIVE_WARN) return std::unexpected(write_error());
    if (!entry.hardlink && entry.type == AE_IFREG) {
      const void* block = nullptr;
      size_t size = 0;
      la_int64_t offset = 0;
      int rc;
      while ((rc = archive_read_data_block(in.get(), &block, &size, &offset)) == ARCHIVE_OK) {
        if (archive_write_data_block(out.get(), block, size, offset) < ARCHIVE_WARN)
          return std::unexpected(write_error());
        stats.bytes += size;
      }
      if (rc != ARCHIVE_EOF) return std::unexpected(corrupt(in.get(), tar));
    }
    if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN) return std::unexpected(write_error());
    if (entry.hardlink) {
      ++stats.hardlinks;
    } else if (entry.type == AE_IFDIR) {
      ++stats.directories;
    } else if (entry.type == AE_IFLNK) {
      ++stats.symlinks;
    } else {
      ++stats.files;
    }
  }
  if (archive_write_close(out.get()) != ARCHIVE_OK) {
    const char* why = archive_error_string(out.get());
    return std::unexpected(Error{.kind = ErrorKind::io, .message = std::string("extracting: ") + (why ? why : "")});
  }
  return stats;
}

}  // namespace orc::engine
