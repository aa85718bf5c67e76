#include "orchestrator/inspect/package.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace orc::inspect {

namespace {

struct ReadDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<struct archive, ReadDeleter>;

bool starts_with(Bytes data, std::uint64_t offset, std::initializer_list<unsigned char> magic) {
  const auto head = sub(data, offset, magic.size());
  if (!head) return false;
  std::size_t i = 0;
  for (unsigned char m : magic)
    if ((*head)[i++] != std::byte{m}) return false;
  return true;
}

std::string_view compressor_name(PackageKind kind) {
  switch (kind) {
    case PackageKind::gzip:
      return "gzip";
    case PackageKind::xz:
      return "xz";
    case PackageKind::zstd:
      return "zstd";
    case PackageKind::zip:
      return "zip";
    case PackageKind::tar:
      return "tar";
  }
  return "";
}

std::string format_name(PackageKind kind, int archive_format) {
  if ((archive_format & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP) return "zip";
  switch (kind) {
    case PackageKind::gzip:
      return "tar.gz";
    case PackageKind::xz:
      return "tar.xz";
    case PackageKind::zstd:
      return "tar.zst";
    default:
      return "tar";
  }
}

// A growth-only buffer: members are read one after another into the same
// memory, and none of it is zero-filled first (every byte handed out was
// written by archive_read_data).
class MemberBuffer {
 public:
  std::byte* reserve(std::uint64_t size) {
    if (size > m_capacity) {
      m_data = std::make_unique_for_overwrite<std::byte[]>(size);
      m_capacity = size;
    }
    return m_data.get();
  }
  // Grows to at least `size`, keeping the first `keep` bytes.
  std::byte* grow(std::uint64_t size, std::uint64_t keep) {
    if (size <= m_capacity) return m_data.get();
    auto bigger = std::make_unique_for_overwrite<std::byte[]>(size);
    if (keep) std::memcpy(bigger.get(), m_data.get(), keep);
    m_data = std::move(bigger);
    m_capacity = size;
    return m_data.get();
  }

 private:
  std::unique_ptr<std::byte[]> m_data;
  std::uint64_t m_capacity = 0;
};

Damage damage_at(struct archive* a, std::string what) {
  const char* message = archive_error_string(a);
  if (message && *message) what += std::string(": ") + message;
  const la_int64_t consumed = archive_filter_bytes(a, -1);
  return {static_cast<std::uint64_t>(consumed > 0 ? consumed : 0), std::move(what)};
}

// Reads the current member into `buffer`. The declared size (when the format
// records one) is only a hint: the loop reads until libarchive says the
// member ended, and refuses to pass `max_member`.
// `stream_broken` is set when libarchive failed mid-member: its position in
// the stream is then unknown, and the walk must stop.
std::expected<Bytes, Damage> read_member(struct archive* a, struct archive_entry* entry, std::string_view path,
                                         MemberBuffer& buffer, std::uint64_t max_member, bool& stream_broken) {
  const std::string name(path);
  std::uint64_t declared = 0;
  if (archive_entry_size_is_set(entry)) {
    const la_int64_t s = archive_entry_size(entry);
    declared = s > 0 ? static_cast<std::uint64_t>(s) : 0;
    if (declared > max_member)
      return std::unexpected(Damage{static_cast<std::uint64_t>(archive_filter_bytes(a, -1)),
                                    "member '" + name + "' is " + std::to_string(declared) + " bytes, over the " +
                                        std::to_string(max_member) + "-byte limit for one member; not read"});
  }
  std::uint64_t capacity = declared > 0 ? declared : 64 * 1024;
  std::byte* data = buffer.reserve(capacity);
  std::uint64_t used = 0;
  for (;;) {
    if (used == capacity) {
      if (capacity >= max_member)
        return std::unexpected(Damage{static_cast<std::uint64_t>(archive_filter_bytes(a, -1)),
                                      "member '" + name + "' is over the " + std::to_string(max_member) +
                                          "-byte limit for one member; not read"});
      capacity = std::min(capacity * 2, max_member);
      data = buffer.grow(capacity, used);
    }
    const la_ssize_t n = archive_read_data(a, data + used, static_cast<std::size_t>(capacity - used));
    if (n == 0) break;
    if (n < 0) {
      stream_broken = true;
      return std::unexpected(damage_at(a, "member '" + name + "' cannot be read"));
    }
    used += static_cast<std::uint64_t>(n);
  }
  return Bytes(data, static_cast<std::size_t>(used));
}

}  // namespace

std::optional<PackageKind> package_kind(Bytes data) {
  if (starts_with(data, 0, {'P', 'K', 0x03, 0x04})) return PackageKind::zip;
  if (starts_with(data, 0, {0x1f, 0x8b})) return PackageKind::gzip;
  if (starts_with(data, 0, {0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00})) return PackageKind::xz;
  if (starts_with(data, 0, {0x28, 0xb5, 0x2f, 0xfd})) return PackageKind::zstd;
  if (starts_with(data, 257, {'u', 's', 't', 'a', 'r'})) return PackageKind::tar;
  return std::nullopt;
}

PackageWalk walk_package(Bytes data, PackageKind kind, const MemberVisitor& visit, std::uint64_t max_member) {
  PackageWalk walk;
  walk.format = std::string(compressor_name(kind));
  ArchivePtr archive(archive_read_new());
  if (!archive) {
    walk.damage = Damage{0, "libarchive could not allocate a reader"};
    return walk;
  }
  struct archive* a = archive.get();
  // Only the containers packages use: a member that happens to be, say, an
  // ISO image is a file, not a package to descend into.
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_xz(a);
  archive_read_support_filter_zstd(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  archive_read_support_format_zip(a);
  const bool compressed = kind != PackageKind::zip && kind != PackageKind::tar;
  // A compressed stream whose content no archive format claims (say
  // libfoo.so.gz) is not a package, and not damage either. libarchive says so
  // when opening, or at the first header, with ARCHIVE_ERRNO_FILE_FORMAT,
  // which is EILSEQ on Linux (libarchive's archive_platform.h; the public
  // header only mentions the name).
  const auto holds_no_archive = [&] { return compressed && archive_format(a) == 0 && archive_errno(a) == EILSEQ; };
  if (archive_read_open_memory(a, data.data(), data.size()) != ARCHIVE_OK) {
    if (!holds_no_archive()) walk.damage = damage_at(a, "not a readable " + walk.format + " stream");
    return walk;
  }

  MemberBuffer buffer;
  for (bool first = true;; first = false) {
    struct archive_entry* entry = nullptr;
    const int status = archive_read_next_header(a, &entry);
    if (status == ARCHIVE_EOF) break;
    if (first && status == ARCHIVE_FATAL && holds_no_archive()) return walk;
    if (status == ARCHIVE_FATAL || status == ARCHIVE_RETRY) {
      if (first) walk.format = format_name(kind, archive_format(a));
      walk.is_archive = !first || archive_format(a) != 0;
      walk.damage = damage_at(a, first ? "no readable archive header" : "archive stream is damaged");
      return walk;
    }
    // ARCHIVE_WARN (an odd header field) still yields a usable entry.
    if (first) {
      walk.format = format_name(kind, archive_format(a));
      walk.is_archive = true;
    }
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const char* raw_path = archive_entry_pathname(entry);
    const std::string path = raw_path ? raw_path : "";
    bool stream_broken = false;
    auto bytes = read_member(a, entry, path, buffer, max_member, stream_broken);
    visit(path, std::move(bytes));
    if (stream_broken) {
      walk.damage = damage_at(a, "archive stream is damaged after member '" + path + "'");
      return walk;
    }
  }
  return walk;
}

}  // namespace orc::inspect
