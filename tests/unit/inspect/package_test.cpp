// Packages streamed through libarchive from memory: every container format a
// release ships in, member paths, the member size cap, and damage.
#include "orchestrator/inspect/package.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include "tests/unit/inspect/archive_writer.hpp"
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/digest/sha256.hpp"

namespace orc::inspect {
namespace {

using Members = std::vector<std::pair<std::string, std::string>>;

// Builds an archive in memory with libarchive's writer (the test's side of
// the format; the reader under test never sees how it was made).
std::string make_archive(int format, int filter, const Members& members, bool declare_sizes = true) {
  return testing::write_archive(format, filter, [&](struct archive* a) {
    for (const auto& [path, data] : members) {
      struct archive_entry* e = archive_entry_new();
      archive_entry_set_pathname(e, path.c_str());
      archive_entry_set_filetype(e, path.ends_with("/") ? AE_IFDIR : AE_IFREG);
      archive_entry_set_perm(e, 0644);
      if (declare_sizes) archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
      archive_write_header(a, e);
      archive_write_data(a, data.data(), data.size());
      archive_entry_free(e);
    }
  });
}

struct Seen {
  std::vector<std::string> paths;
  std::vector<std::string> data;
  std::vector<PackageMember> members;  // bytes dropped: valid only during the visit
  std::vector<Damage> damage;
};

MemberUse read_all(Bytes) { return MemberUse::read; }

PackageWalk walk(const std::string& bytes, Seen& seen, PackageLimits limits = {},
                 const MemberFilter& filter = read_all) {
  const auto kind = package_kind(as_bytes(bytes));
  EXPECT_TRUE(kind.has_value());
  if (!kind) return {};
  return walk_package(
      as_bytes(bytes), *kind, filter,
      [&](std::string_view path, std::expected<PackageMember, Damage> member) {
        seen.paths.emplace_back(path);
        if (!member) {
          seen.damage.push_back(member.error());
          return;
        }
        if (member->bytes) seen.data.emplace_back(as_text(*member->bytes));
        member->bytes.reset();
        seen.members.push_back(std::move(*member));
      },
      limits);
}

const Members k_members = {{"torch/", ""},
                           {"torch/lib/libk.so", std::string("\x7f"
                                                             "ELF",
                                                             4) +
                                                     std::string(5000, 'x')},
                           {"torch/__init__.py", "import os\n"}};

TEST(Package, EveryContainerFormatStreamsItsRegularFiles) {
  struct Case {
    int format, filter;
    std::string expected;
  };
  for (const Case& c : {Case{ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, "zip"},
                        Case{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_NONE, "tar"},
                        Case{ARCHIVE_FORMAT_TAR_USTAR, ARCHIVE_FILTER_GZIP, "tar.gz"},
                        Case{ARCHIVE_FORMAT_TAR_GNUTAR, ARCHIVE_FILTER_XZ, "tar.xz"},
                        Case{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_ZSTD, "tar.zst"}}) {
    SCOPED_TRACE(c.expected);
    Seen seen;
    const PackageWalk w = walk(make_archive(c.format, c.filter, k_members), seen);
    EXPECT_EQ(w.format, c.expected);
    EXPECT_TRUE(w.is_archive);
    EXPECT_FALSE(w.damage.has_value()) << w.damage->what;
    // The directory is not visited; files come in archive order with their bytes.
    EXPECT_EQ(seen.paths, (std::vector<std::string>{"torch/lib/libk.so", "torch/__init__.py"}));
    ASSERT_EQ(seen.data.size(), 2u);
    EXPECT_EQ(seen.data[0], k_members[1].second);
    EXPECT_EQ(seen.data[1], "import os\n");
  }
}

TEST(Package, DetectsContainersByMagicOnly) {
  EXPECT_EQ(package_kind(as_bytes("PK\x03\x04rest")), PackageKind::zip);
  EXPECT_EQ(package_kind(as_bytes("\x1f\x8b\x08")), PackageKind::gzip);
  EXPECT_EQ(package_kind(as_bytes(std::string("\xfd"
                                              "7zXZ\0",
                                              6))),
            PackageKind::xz);
  EXPECT_EQ(package_kind(as_bytes("\x28\xb5\x2f\xfd")), PackageKind::zstd);
  EXPECT_EQ(package_kind(as_bytes(make_archive(ARCHIVE_FORMAT_TAR_USTAR, ARCHIVE_FILTER_NONE, k_members))),
            PackageKind::tar);
  EXPECT_FALSE(package_kind(as_bytes("PK")).has_value());
  EXPECT_FALSE(package_kind(as_bytes(std::string(600, 'u'))).has_value());
}

TEST(Package, MemberOverTheCapIsDamageAndTheWalkGoesOn) {
  Seen seen;
  const PackageWalk w =
      walk(make_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, k_members), seen, {.max_member = 1000});
  EXPECT_FALSE(w.damage.has_value());
  ASSERT_EQ(seen.damage.size(), 1u);
  EXPECT_NE(seen.damage[0].what.find("'torch/lib/libk.so' is 5004 bytes, over the 1000-byte limit"), std::string::npos)
      << seen.damage[0].what;
  EXPECT_EQ(seen.data, (std::vector<std::string>{"import os\n"}));  // the next member is still read
}

TEST(Package, TruncatedCompressedTarIsDamageAfterWhatWasRead) {
  Members big = {{"a.bin", std::string(200000, 'a')}, {"b.bin", std::string(200000, 'b')}};
  std::string tgz = make_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_GZIP, big);
  tgz.resize(tgz.size() / 2);
  Seen seen;
  const PackageWalk w = walk(tgz, seen);
  EXPECT_EQ(w.format, "tar.gz");
  ASSERT_TRUE(w.damage.has_value());
  EXPECT_LE(w.damage->offset, tgz.size());
}

TEST(Package, GarbageAfterAZipMagicIsDamageNotACrash) {
  std::string junk = "PK\x03\x04";
  junk += std::string(300, '\xff');
  Seen seen;
  const PackageWalk w = walk(junk, seen);
  EXPECT_TRUE(w.damage.has_value());
  EXPECT_TRUE(seen.data.empty());
}

TEST(Package, CompressedStreamWithoutAnArchiveIsNotAPackage) {
  // gzip of a plain file (libfoo.so.gz): a compressed stream, no members, no damage.
  std::string gz;
  {
    struct archive* a = archive_write_new();
    archive_write_set_format_raw(a);
    archive_write_add_filter_gzip(a);
    archive_write_open(
        a, &gz, nullptr,
        [](struct archive*, void* client, const void* buffer, size_t length) -> la_ssize_t {
          static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
          return static_cast<la_ssize_t>(length);
        },
        nullptr);
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_filetype(e, AE_IFREG);
    archive_write_header(a, e);
    const std::string text(100, 'z');
    archive_write_data(a, text.data(), text.size());
    archive_entry_free(e);
    archive_write_close(a);
    archive_write_free(a);
  }
  Seen seen;
  const PackageWalk w = walk(gz, seen);
  EXPECT_EQ(w.format, "gzip");
  EXPECT_FALSE(w.is_archive);
  EXPECT_FALSE(w.damage.has_value()) << w.damage->what;
  EXPECT_TRUE(seen.paths.empty());
}

// The filter sees each member's first bytes and decides: a .py is read
// through and never visited, an ELF is read, a package too deep is hashed.
TEST(Package, TheFilterDecidesFromTheFirstBytesWhatIsRead) {
  const std::string elf = k_members[1].second;
  const std::string zip = make_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, {{"inner.so", elf}});
  const std::string outer = make_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_ZSTD,
                                         {{"a.py", "import os\n"}, {"lib.so", elf}, {"x.whl", zip}});
  std::vector<std::size_t> head_sizes;
  Seen seen;
  const PackageWalk w = walk(outer, seen, {}, [&](Bytes head) {
    head_sizes.push_back(head.size());
    if (package_kind(head)) return MemberUse::hash;
    return read_binaries(head);
  });
  EXPECT_FALSE(w.damage.has_value()) << w.damage->what;
  // Each head is the member's first bytes: all of a short one, at most k_member_head.
  EXPECT_EQ(head_sizes, (std::vector<std::size_t>{10, elf.size() < k_member_head ? elf.size() : k_member_head,
                                                  zip.size() < k_member_head ? zip.size() : k_member_head}));
  EXPECT_EQ(seen.paths, (std::vector<std::string>{"lib.so", "x.whl"}));
  EXPECT_EQ(seen.data, (std::vector<std::string>{elf}));  // x.whl: hashed, no bytes
  ASSERT_EQ(seen.members.size(), 2u);
  EXPECT_EQ(seen.members[0].size, elf.size());
  EXPECT_EQ(seen.members[0].sha256, digest::sha256(as_bytes(elf)).hex());
  EXPECT_EQ(seen.members[1].size, zip.size());
  EXPECT_EQ(seen.members[1].sha256, digest::sha256(as_bytes(zip)).hex());
}

TEST(Package, ReadBinariesKnowsTheFormatsThatHoldDeviceCode) {
  EXPECT_EQ(read_binaries(as_bytes("\x7f"
                                   "ELF\x02\x01")),
            MemberUse::read);
  EXPECT_EQ(read_binaries(as_bytes("!<arch>\nx")), MemberUse::read);
  EXPECT_EQ(read_binaries(as_bytes(std::string("\x50\xed\x55\xba", 4))), MemberUse::read);  // fatbin
  EXPECT_EQ(read_binaries(as_bytes("PK\x03\x04")), MemberUse::read);
  EXPECT_EQ(read_binaries(as_bytes("import os\n")), MemberUse::skip);
  EXPECT_EQ(read_binaries(as_bytes(std::string(4096, '\0'))), MemberUse::skip);
  EXPECT_EQ(read_binaries({}), MemberUse::skip);
}

// Past PackageLimits::in_memory a member goes to a temporary file and comes
// back mapped: the same bytes, zero runs (left as holes) included.
TEST(Package, AMemberPastTheMemoryLimitComesBackFromATemporaryFile) {
  std::string zeros_inside = k_members[1].second + std::string(3 << 20, '\0') + "tail";
  zeros_inside += std::string(1 << 20, '\0');  // ending in zeros: the file's size must still be right
  const Members members = {{"big.so", zeros_inside}, {"small.so", k_members[1].second}};
  for (const int format : {ARCHIVE_FORMAT_ZIP, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED}) {
    Seen seen;
    const PackageWalk w = walk(make_archive(format, ARCHIVE_FILTER_NONE, members), seen, {.in_memory = 4096});
    EXPECT_FALSE(w.damage.has_value()) << w.damage->what;
    ASSERT_EQ(seen.data.size(), 2u);
    EXPECT_TRUE(seen.data[0] == zeros_inside);
    EXPECT_EQ(seen.members[0].sha256, digest::sha256(as_bytes(zeros_inside)).hex());
    EXPECT_EQ(seen.data[1], k_members[1].second);
  }
  // A zip written as a stream declares no sizes: the member fills memory
  // first, then moves to the file when it passes the limit.
  const std::string streamed = make_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, members, false);
  Seen seen;
  const PackageWalk w = walk(streamed, seen, {.in_memory = 1 << 20});
  EXPECT_FALSE(w.damage.has_value()) << w.damage->what;
  ASSERT_EQ(seen.data.size(), 2u);
  EXPECT_TRUE(seen.data[0] == zeros_inside);
  EXPECT_EQ(seen.members[0].size, zeros_inside.size());
  EXPECT_EQ(seen.data[1], k_members[1].second);
}

TEST(Package, ATemporaryFileThatCannotBeWrittenIsTheMembersDamage) {
  const char* saved = std::getenv("TMPDIR");
  const std::string old = saved ? saved : "";
  ::setenv("TMPDIR", "/nonexistent-orchestrate-tmp", 1);
  Seen seen;
  const PackageWalk w =
      walk(make_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, k_members), seen, {.in_memory = 1000});
  if (saved)
    ::setenv("TMPDIR", old.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  EXPECT_FALSE(w.damage.has_value());
  ASSERT_EQ(seen.damage.size(), 1u);
  EXPECT_NE(seen.damage[0].what.find("member 'torch/lib/libk.so'"), std::string::npos) << seen.damage[0].what;
  EXPECT_NE(seen.damage[0].what.find("/nonexistent-orchestrate-tmp"), std::string::npos) << seen.damage[0].what;
  EXPECT_NE(seen.damage[0].what.find("set TMPDIR to a directory with room"), std::string::npos) << seen.damage[0].what;
  EXPECT_EQ(seen.data, (std::vector<std::string>{"import os\n"}));  // the walk went on
}

}  // namespace
}  // namespace orc::inspect
