#pragma once
// Packages (wheels and other zips, tar, tar.gz, tar.xz, tar.zst) read through
// libarchive, streamed from bytes already in memory: a member is decompressed
// into a buffer, handed to the caller, and dropped; nothing touches the disk.
// Private to the inspect module: libarchive's types stay in package.cpp.
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/model.hpp"

namespace orc::inspect {

// Members above this are refused (reported as damage) rather than buffered:
// no real shared object comes near it, and a lying header must not make us
// allocate the machine's memory.
inline constexpr std::uint64_t k_max_member_size = 4ull << 30;

enum class PackageKind { zip, tar, gzip, xz, zstd };

// What the bytes' magic says, if it names a package container: zip
// ("PK\3\4"), gzip (1f 8b), xz (fd 37 7a 58 5a 00), zstd (28 b5 2f fd), or a
// plain tar ("ustar" at offset 257).
std::optional<PackageKind> package_kind(Bytes data);

struct PackageWalk {
  // "zip", "tar", "tar.gz", "tar.xz", "tar.zst"; for a compressed stream that
  // holds no archive, the compressor's name ("gzip", "xz", "zstd").
  std::string format;
  bool is_archive = false;
  std::optional<Damage> damage;  // the walk stopped here; members before it were visited
};

// Called once per regular-file member, in archive order, with its path inside
// the package and its bytes (valid only during the call), or the damage that
// kept them from being read (a member over k_max_member_size, a corrupt
// stream inside the member). Directories, links and devices are not visited.
using MemberVisitor = std::function<void(std::string_view path, std::expected<Bytes, Damage> bytes)>;

// Never throws on bad input; damage offsets are into `data` (how far
// libarchive had read the package when it failed).
PackageWalk walk_package(Bytes data, PackageKind kind, const MemberVisitor& visit,
                         std::uint64_t max_member = k_max_member_size);

}  // namespace orc::inspect
