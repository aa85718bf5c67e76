#pragma once
// Packages (wheels and other zips, tar, tar.gz, tar.xz, tar.zst) read through
// libarchive, streamed from bytes already in memory. Private to the inspect
// module: libarchive's types stay in package.cpp.
//
// Memory per member is bounded whatever the member declares: its first bytes
// decide (MemberFilter) whether it is read at all. One that cannot hold
// device code (a .py, a data file of zeros) is passed over unread (a zip's
// member is seeked past; a tarball's is decompressed through libarchive's
// own buffer); one that can is hashed as it streams, held in memory up to
// PackageLimits::in_memory (64 MiB), and past that written to an unnamed
// temporary file ($TMPDIR, else /var/tmp; runs of zeros left as holes) that
// is mapped once complete, so only the pages a parser touches are resident.
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/model.hpp"

namespace orc::inspect {

// Members above this are refused (reported as damage) rather than read: no
// real shared object comes near it, and a lying header must not make us
// spend the machine's disk or time.
inline constexpr std::uint64_t k_max_member_size = 4ull << 30;
// A member this large or smaller is held in memory; a larger one in a
// temporary file.
inline constexpr std::uint64_t k_member_in_memory = 64ull << 20;
// How many of a member's first bytes a MemberFilter sees (fewer only when
// the member is shorter): enough for every magic, a tar's at offset 257 too.
inline constexpr std::size_t k_member_head = 4096;

struct PackageLimits {
  std::uint64_t max_member = k_max_member_size;
  std::uint64_t in_memory = k_member_in_memory;
  // Hash each member read (PackageMember::sha256); an image's layer scan,
  // whose layer digest is checked as a whole, leaves it out (one pass of
  // SHA-256 over every byte fewer).
  bool hash = true;
};

enum class PackageKind { zip, tar, gzip, xz, zstd };

// What the bytes' magic says, if it names a package container: zip
// ("PK\3\4"), gzip (1f 8b), xz (fd 37 7a 58 5a 00), zstd (28 b5 2f fd), or a
// plain tar ("ustar" at offset 257).
std::optional<PackageKind> package_kind(Bytes data);

// What to do with a member, decided by its first bytes.
enum class MemberUse {
  skip,  // passed over, not visited (unless the stream fails there)
  hash,  // visited with its size and SHA-256, without its bytes
  read,  // visited with its size, SHA-256 and bytes
  // visited with a stream of its bytes, for a member too large to hold (a
  // layer inside an image archive); no SHA-256. Only walk_tar_stream
  // streams; walk_package reads such a member.
  stream,
};
using MemberFilter = std::function<MemberUse(Bytes head)>;

// The filter inspect and smoke share: read what may hold device code (an
// ELF, an ar archive, a fatbin, a package), skip the rest.
MemberUse read_binaries(Bytes head);

struct PackageWalk {
  // "zip", "tar", "tar.gz", "tar.xz", "tar.zst"; for a compressed stream that
  // holds no archive, the compressor's name ("gzip", "xz", "zstd").
  std::string format;
  bool is_archive = false;
  std::optional<Damage> damage;  // the walk stopped here; members before it were visited
  bool refused = false;          // stopped because the EntryObserver refused an entry
};

// A byte stream the walk pulls from: fills the buffer's front, returns how
// many bytes it put there, 0 at the stream's end, or an error that stops
// the walk (reported as damage).
using StreamRead = std::function<std::expected<std::size_t, std::string>(std::span<std::byte> buffer)>;

struct PackageMember {
  std::uint64_t size = 0;
  std::string sha256;          // lower-case hex, of every byte of the member
  std::optional<Bytes> bytes;  // with MemberUse::read; valid only during the visit
  // With MemberUse::stream: the member's bytes from its first, valid only
  // during the visit; what the visit leaves unread is skipped.
  const StreamRead* stream = nullptr;
};

// Called once per regular-file member the filter did not skip, in archive
// order, with its path inside the package, or the damage that kept it from
// being read (a member over the cap, a corrupt stream inside it, a
// temporary file that could not be written). Directories, links and devices
// are not visited.
using MemberVisitor = std::function<void(std::string_view path, std::expected<PackageMember, Damage> member)>;

// Never throws on bad input; damage offsets are into `data` (how far
// libarchive had read the package when it failed).
PackageWalk walk_package(Bytes data, PackageKind kind, const MemberFilter& filter, const MemberVisitor& visit,
                         const PackageLimits& limits = {});

// Every entry of a stream, whatever its type, before its data is read: a
// container image's layers need directories, links and whiteouts too.
enum class TarKind { file, directory, symlink, hardlink, other };
struct EntryInfo {
  std::string_view path;  // as the tar names it
  TarKind kind;
  std::string_view link;  // a symbolic link's target, or a hard link's
  std::uint64_t size;     // declared, 0 when not recorded
};
// Returns a message to refuse the entry: the walk stops there, with
// `refused` set and the message as its damage.
using EntryObserver = std::function<std::optional<std::string>(const EntryInfo&)>;

// A tar stream (plain, gzip, xz or zstd: told by its magic) read as it
// arrives, never whole: a container image's layer. Regular files go
// through `filter` and `visit` as walk_package's members; hard links are
// observed, not visited (their bytes are another entry's). A stream
// holding no tar entry is damage.
PackageWalk walk_tar_stream(const StreamRead& read, const MemberFilter& filter, const MemberVisitor& visit,
                            const EntryObserver& observe, const PackageLimits& limits = {});

}  // namespace orc::inspect
