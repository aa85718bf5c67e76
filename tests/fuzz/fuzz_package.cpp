// libFuzzer target for packages read through libarchive (wheels and other
// zips, tar, tar.gz, tar.xz, tar.zst): walk_package for the kind the magic
// names, and for every kind when the magic names none (a truncated or lying
// header must fail as damage, never crash), with each member's bytes handed
// to the ELF reader as `orchestrate inspect` does.
#include <cstddef>
#include <cstdint>
#include <span>

#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/inspect/package.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using orc::fuzz::check;
using namespace orc::inspect;

// Small enough that a lying size field is refused fast, large enough for
// every seed's members; members over 64 KiB go through the temporary file.
constexpr PackageLimits k_fuzz_limits{.max_member = 1 << 20, .in_memory = 64 << 10};

void walk(Bytes bytes, PackageKind kind) {
  std::size_t members = 0;
  // What inspect reads, it reads; what it would skip is hashed, so both
  // paths of the reader run.
  const auto filter = [](Bytes head) {
    const MemberUse use = read_binaries(head);
    return use == MemberUse::skip ? MemberUse::hash : use;
  };
  const PackageWalk walked = walk_package(
      bytes, kind, filter,
      [&](std::string_view, std::expected<PackageMember, Damage> member) {
        ++members;
        if (!member) {
          check(!member.error().what.empty());
          return;
        }
        check(member->size <= k_fuzz_limits.max_member);
        check(member->sha256.size() == 64);
        if (member->bytes) {
          check(member->bytes->size() == member->size);
          (void)parse_elf(*member->bytes);
        }
      },
      k_fuzz_limits);
  check(!walked.format.empty());
  if (walked.damage) check(!walked.damage->what.empty() && walked.damage->offset <= bytes.size());
  if (!walked.is_archive) check(members <= 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Bytes bytes = std::as_bytes(std::span(data, size));
  if (const auto kind = package_kind(bytes)) {
    walk(bytes, *kind);
    return 0;
  }
  for (const auto kind : {PackageKind::zip, PackageKind::tar, PackageKind::gzip, PackageKind::xz, PackageKind::zstd})
    walk(bytes, kind);
  return 0;
}
