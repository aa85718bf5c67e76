#include "orchestrator/inspect/package.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <vector>

#include "orchestrator/tarsafe/archive_handle.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/inspect/fatbin.hpp"
#include "orchestrator/inspect/member_store.hpp"

namespace orc::inspect {

namespace {

// libarchive's reads land in a buffer of this size, reused for every member.
constexpr std::size_t k_read_chunk = 1 << 20;

using ArchivePtr = tarsafe::ReadArchive;

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

// How far into the package libarchive has read.
std::uint64_t consumed(struct archive* a) {
  const la_int64_t n = archive_filter_bytes(a, -1);
  return static_cast<std::uint64_t>(n > 0 ? n : 0);
}

Damage damage_at(struct archive* a, std::string what) {
  const char* message = archive_error_string(a);
  if (message && *message) what += std::string(": ") + message;
  return {consumed(a), std::move(what)};
}

// The current member's data, chunk by chunk, counted against the cap.
class MemberStream {
 public:
  MemberStream(struct archive* a, std::string_view path, std::uint64_t max_member, std::vector<std::byte>& buffer)
      : m_archive(a), m_path(path), m_max(max_member), m_buffer(buffer) {}

  // The next chunk (valid until the next call); empty at the member's end.
  std::expected<Bytes, Damage> next() {
    const la_ssize_t n = archive_read_data(m_archive, m_buffer.data(), m_buffer.size());
    if (n < 0) {
      m_broken = true;
      return std::unexpected(damage_at(m_archive, "member '" + m_path + "' cannot be read"));
    }
    m_total += static_cast<std::uint64_t>(n);
    if (m_total > m_max)
      return std::unexpected(Damage{
          consumed(m_archive),
          "member '" + m_path + "' is over the " + std::to_string(m_max) + "-byte limit for one member; not read"});
    return Bytes(m_buffer.data(), static_cast<std::size_t>(n));
  }

  // Passes over the rest of the member unread: libarchive seeks past it
  // where it can (a zip's stored sizes), and decompresses it otherwise.
  std::expected<void, Damage> skip_rest() {
    if (archive_read_data_skip(m_archive) >= ARCHIVE_WARN) return {};
    m_broken = true;
    return std::unexpected(damage_at(m_archive, "member '" + m_path + "' cannot be read"));
  }

  // A temporary file that failed the member: what to do about it.
  Damage spill_damage(const std::string& error) const {
    return {consumed(m_archive), "member '" + m_path + "' (" + std::to_string(m_total) + " bytes read) " + error +
                                     "; set TMPDIR to a directory with room"};
  }

  std::uint64_t total() const { return m_total; }
  // libarchive failed mid-member: its place in the stream is unknown, and
  // the walk must stop.
  bool broken() const { return m_broken; }
  const std::string& path() const { return m_path; }

 private:
  struct archive* m_archive;
  std::string m_path;
  std::uint64_t m_max;
  std::vector<std::byte>& m_buffer;
  std::uint64_t m_total = 0;
  bool m_broken = false;
};

// The member's first k_member_head bytes (fewer when it is shorter), and
// whether the member ended within them.
struct Head {
  std::vector<std::byte> bytes;
  bool ended = false;
};

std::expected<Head, Damage> read_head(MemberStream& stream) {
  Head head;
  while (head.bytes.size() < k_member_head) {
    auto chunk = stream.next();
    if (!chunk) return std::unexpected(std::move(chunk.error()));
    if (chunk->empty()) {
      head.ended = true;
      break;
    }
    head.bytes.insert(head.bytes.end(), chunk->begin(), chunk->end());
  }
  return head;
}

// Hashes (and, with a store, keeps) the member from its head to its end.
std::expected<void, Damage> read_rest(MemberStream& stream, const Head& head, digest::Sha256* hash,
                                      MemberStore* store) {
  const auto keep = [&](Bytes chunk) -> std::expected<void, Damage> {
    if (hash) hash->update(chunk);
    if (!store) return {};
    if (auto kept = store->append(chunk); !kept) return std::unexpected(stream.spill_damage(kept.error()));
    return {};
  };
  if (auto kept = keep(head.bytes); !kept) return kept;
  if (head.ended) return {};
  for (;;) {
    auto chunk = stream.next();
    if (!chunk) return std::unexpected(std::move(chunk.error()));
    if (chunk->empty()) return {};
    if (auto kept = keep(*chunk); !kept) return kept;
  }
}

// The member the walk is on, as the filter wants it: nullopt for one
// skipped. The declared size (when the format records one) is only a hint:
// the stream is read until libarchive says the member ended. A member to
// stream is visited here, from its head on, and its rest skipped.
std::expected<std::optional<PackageMember>, Damage> read_member(MemberStream& stream, std::uint64_t declared,
                                                                const MemberFilter& filter, const PackageLimits& limits,
                                                                std::optional<MemberStore>& store, bool can_stream,
                                                                const std::function<void(PackageMember)>& visit) {
  auto head = read_head(stream);
  if (!head) return std::unexpected(std::move(head.error()));
  MemberUse use = filter(Bytes(head->bytes).first(std::min(head->bytes.size(), k_member_head)));
  if (use == MemberUse::stream && !can_stream) use = MemberUse::read;
  if (use == MemberUse::skip) {
    if (head->ended) return std::nullopt;
    if (auto skipped = stream.skip_rest(); !skipped) return std::unexpected(std::move(skipped.error()));
    return std::nullopt;
  }
  if (use == MemberUse::stream) {
    std::size_t head_at = 0;
    bool ended = head->ended;
    std::optional<Damage> failed;
    const StreamRead reader = [&](std::span<std::byte> out) -> std::expected<std::size_t, std::string> {
      if (head_at < head->bytes.size()) {
        const std::size_t n = std::min(out.size(), head->bytes.size() - head_at);
        std::copy_n(head->bytes.begin() + static_cast<std::ptrdiff_t>(head_at), n, out.begin());
        head_at += n;
        return n;
      }
      if (ended) return 0;
      auto chunk = stream.next();
      if (!chunk) {
        failed = chunk.error();
        return std::unexpected(chunk.error().what);
      }
      if (chunk->empty()) {
        ended = true;
        return 0;
      }
      // The chunk may be larger than the reader's buffer: keep the rest as
      // the new head.
      const std::size_t n = std::min(out.size(), chunk->size());
      std::copy_n(chunk->begin(), n, out.begin());
      head->bytes.assign(chunk->begin() + static_cast<std::ptrdiff_t>(n), chunk->end());
      head_at = 0;
      return n;
    };
    visit(PackageMember{.size = declared, .sha256 = {}, .bytes = std::nullopt, .stream = &reader});
    if (failed) return std::unexpected(std::move(*failed));
    if (!ended && !stream.broken())
      if (auto skipped = stream.skip_rest(); !skipped) return std::unexpected(std::move(skipped.error()));
    return std::nullopt;
  }
  if (use == MemberUse::read) store.emplace(declared, limits.in_memory);
  digest::Sha256 hash;
  if (auto read = read_rest(stream, *head, limits.hash ? &hash : nullptr, store ? &*store : nullptr); !read)
    return std::unexpected(std::move(read.error()));
  PackageMember member{
      .size = stream.total(), .sha256 = limits.hash ? hash.digest().hex() : std::string(), .bytes = std::nullopt};
  if (store) {
    auto bytes = store->bytes();
    if (!bytes) return std::unexpected(stream.spill_damage(bytes.error()));
    member.bytes = *bytes;
  }
  return member;
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

MemberUse read_binaries(Bytes head) {
  const bool binary = starts_with(head, 0, {0x7f, 'E', 'L', 'F'}) ||
                      starts_with(head, 0, {'!', '<', 'a', 'r', 'c', 'h', '>', '\n'}) ||
                      read_le<std::uint32_t>(head, 0) == k_fatbin_magic || package_kind(head).has_value();
  return binary ? MemberUse::read : MemberUse::skip;
}

namespace {

// The loop both walks share, over an archive already opened: visits
// members as the filter wants them, every entry to `observe` first.
void walk_entries(struct archive* a, PackageWalk& walk, const std::function<std::string()>& format_of,
                  const std::function<bool()>& holds_no_archive, const MemberFilter& filter,
                  const MemberVisitor& visit, const EntryObserver* observe, const PackageLimits& limits) {
  std::vector<std::byte> buffer(k_read_chunk);
  for (bool first = true;; first = false) {
    struct archive_entry* entry = nullptr;
    const int status = archive_read_next_header(a, &entry);
    if (status == ARCHIVE_EOF) break;
    if (first && status == ARCHIVE_FATAL && holds_no_archive()) return;
    if (status == ARCHIVE_FATAL || status == ARCHIVE_RETRY) {
      if (first) walk.format = format_of();
      walk.is_archive = !first || archive_format(a) != 0;
      walk.damage = damage_at(a, first ? "no readable archive header" : "archive stream is damaged");
      return;
    }
    // ARCHIVE_WARN (an odd header field) still yields a usable entry.
    if (first) {
      walk.format = format_of();
      walk.is_archive = true;
    }
    const char* raw_path = archive_entry_pathname(entry);
    const std::string path = raw_path ? raw_path : "";
    const std::uint64_t declared = archive_entry_size_is_set(entry)
                                       ? static_cast<std::uint64_t>(std::max<la_int64_t>(archive_entry_size(entry), 0))
                                       : 0;
    const char* hardlink = archive_entry_hardlink(entry);
    if (observe) {
      TarKind kind = TarKind::other;
      switch (archive_entry_filetype(entry)) {
        case AE_IFREG:
          kind = TarKind::file;
          break;
        case AE_IFDIR:
          kind = TarKind::directory;
          break;
        case AE_IFLNK:
          kind = TarKind::symlink;
          break;
        default:
          break;
      }
      if (hardlink) kind = TarKind::hardlink;
      const char* symlink = archive_entry_symlink(entry);
      const std::string_view link = hardlink ? hardlink : symlink ? symlink : "";
      if (auto refused = (*observe)(EntryInfo{.path = path, .kind = kind, .link = link, .size = declared})) {
        walk.damage = Damage{consumed(a), std::move(*refused)};
        walk.refused = true;
        return;
      }
    }
    if (archive_entry_filetype(entry) != AE_IFREG || hardlink) continue;
    if (declared > limits.max_member) {
      visit(path, std::unexpected(Damage{consumed(a), "member '" + path + "' is " + std::to_string(declared) +
                                                          " bytes, over the " + std::to_string(limits.max_member) +
                                                          "-byte limit for one member; not read"}));
      if (archive_read_data_skip(a) < ARCHIVE_WARN) {
        walk.damage = damage_at(a, "archive stream is damaged after member '" + path + "'");
        return;
      }
      continue;
    }
    MemberStream stream(a, path, limits.max_member, buffer);
    std::optional<MemberStore> store;  // holds the member's bytes through the visit
    auto member = read_member(stream, declared, filter, limits, store, observe != nullptr,
                              [&](PackageMember streamed) { visit(path, std::move(streamed)); });
    if (!member)
      visit(path, std::unexpected(std::move(member.error())));
    else if (*member)
      visit(path, std::move(**member));
    if (stream.broken()) {
      walk.damage = damage_at(a, "archive stream is damaged after member '" + path + "'");
      return;
    }
  }
}

std::string stream_format(struct archive* a) {
  switch (archive_filter_code(a, 0)) {
    case ARCHIVE_FILTER_GZIP:
      return "tar.gz";
    case ARCHIVE_FILTER_XZ:
      return "tar.xz";
    case ARCHIVE_FILTER_ZSTD:
      return "tar.zst";
    default:
      return "tar";
  }
}

// A reader of tar streams, plain or compressed: only the containers packages
// and layers use, so a member that happens to be, say, an ISO image is a
// file, not a package to descend into.
ArchivePtr tar_reader() {
  ArchivePtr archive = tarsafe::new_read_archive();
  struct archive* a = archive.get();
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_xz(a);
  archive_read_support_filter_zstd(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  return archive;
}

}  // namespace

PackageWalk walk_package(Bytes data, PackageKind kind, const MemberFilter& filter, const MemberVisitor& visit,
                         const PackageLimits& limits) {
  PackageWalk walk;
  walk.format = std::string(compressor_name(kind));
  ArchivePtr archive = tar_reader();
  struct archive* a = archive.get();
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
  walk_entries(
      a, walk, [&] { return format_name(kind, archive_format(a)); }, holds_no_archive, filter, visit, nullptr, limits);
  return walk;
}

PackageWalk walk_tar_stream(const StreamRead& read, const MemberFilter& filter, const MemberVisitor& visit,
                            const EntryObserver& observe, const PackageLimits& limits) {
  PackageWalk walk;
  walk.format = "tar";
  ArchivePtr archive = tar_reader();
  struct archive* a = archive.get();
  tarsafe::ReadStream stream(read, k_read_chunk);
  if (stream.open(a) != ARCHIVE_OK) {
    walk.damage = damage_at(a, "not a readable tar stream");
    return walk;
  }
  walk_entries(
      a, walk, [&] { return stream_format(a); }, [] { return false; }, filter, visit, &observe, limits);
  if (!walk.is_archive && !walk.damage) walk.damage = Damage{consumed(a), "holds no tar entries"};
  return walk;
}

}  // namespace orc::inspect
