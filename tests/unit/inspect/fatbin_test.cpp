// The fatbin walk on hand-built containers: kinds, names (cubin first for
// ELF, header for PTX), compression, identifiers, and every kind of damage
// fatbin-format.md 2.7 and 7 name. Real nvcc output is in fatbin_nvcc_test.cpp.
#include "orchestrator/inspect/fatbin.hpp"

#include <gtest/gtest.h>

#include "tests/unit/inspect/binary_fixtures.hpp"

namespace orc::inspect {
namespace {

using arch::ComputeCapability;
using arch::Variant;
using testing::Buffer;
using testing::EntrySpec;
using testing::fatbin_container;
using testing::fatbin_entry;

FatbinScan scan_all(const Buffer& data, bool exact = false) {
  return scan_fatbins(data, 0, data.size(), {.exact = exact});
}

// "ELF sm_90a" etc., for assertions that read like a listing.
std::vector<std::string> names(const FatbinScan& scan) {
  std::vector<std::string> out;
  for (const auto& e : scan.entries) {
    const char* kind = e.kind == EntryKind::elf      ? "ELF"
                       : e.kind == EntryKind::ptx    ? "PTX"
                       : e.kind == EntryKind::lto_ir ? "LTO"
                                                     : "UNK";
    out.push_back(std::string(kind) + " " + e.arch.sm());
  }
  return out;
}

Buffer ptx(std::uint32_t arch, std::uint64_t flags = 0x11) {
  return fatbin_entry({.kind = 1, .arch = arch, .flags = flags, .payload = testing::bytes_of(".version 9.0\n")});
}

TEST(Fatbin, KindsAndHeaderNames) {
  const Buffer data = fatbin_container({
      ptx(90, 0x108011),                                        // compute_90a, zstd flag
      ptx(100, 0x208011),                                       // compute_100f
      ptx(120, 0x11),                                           //
      fatbin_entry({.kind = 8, .arch = 80, .flags = 0x18011}),  // LTO-IR
      fatbin_entry({.kind = 0x40, .arch = 80}),                 // unknown kinds keep their number
      fatbin_entry({.kind = 4, .arch = 52}),
  });
  const FatbinScan scan = scan_all(data);
  EXPECT_FALSE(scan.damage);
  EXPECT_EQ(scan.containers, 1u);
  EXPECT_EQ(names(scan), (std::vector<std::string>{"PTX sm_90a", "PTX sm_100f", "PTX sm_120", "LTO sm_80", "UNK sm_80",
                                                   "UNK sm_52"}));
  EXPECT_EQ(scan.entries[4].raw_kind, 0x40);
  EXPECT_EQ(scan.entries[5].raw_kind, 4);
  EXPECT_EQ(scan.entries[0].header_arch, ComputeCapability(9, 0, Variant::arch_specific));
  EXPECT_EQ(scan.entries[0].flags, 0x108011u);
  EXPECT_EQ(scan.entries[0].compression, Compression::zstd);
  EXPECT_EQ(scan.entries[2].compression, Compression::none);
  EXPECT_FALSE(scan.entries[0].arch_from_cubin);
}

TEST(Fatbin, CompressionFlags) {
  const Buffer data = fatbin_container({ptx(80, 0x2011), ptx(80, 0x8011), ptx(80, 0x1011), ptx(80, 0x11)});
  const FatbinScan scan = scan_all(data);
  ASSERT_EQ(scan.entries.size(), 4u);
  EXPECT_EQ(scan.entries[0].compression, Compression::lz4);
  EXPECT_EQ(scan.entries[1].compression, Compression::zstd);
  EXPECT_EQ(scan.entries[2].compression, Compression::other);
  EXPECT_EQ(scan.entries[3].compression, Compression::none);
}

// cuobjdump names ELF entries from the cubin: e_flags SM and .nv.compat 'a'
// win over the header (fatbin-format.md 4.3, the mx.fatbin probe).
TEST(Fatbin, ElfNamedFromTheCubin) {
  const Buffer data = fatbin_container({
      fatbin_entry({.kind = 2, .arch = 86, .flags = 0x11, .payload = testing::build_cubin(75, false)}),
      fatbin_entry({.kind = 2, .arch = 90, .flags = 0x11, .payload = testing::build_cubin(90, true)}),
      fatbin_entry({.kind = 2, .arch = 100, .flags = 0x1200011, .payload = testing::build_cubin(100, false)}),
  });
  const FatbinScan scan = scan_all(data);
  EXPECT_FALSE(scan.damage);
  EXPECT_EQ(names(scan), (std::vector<std::string>{"ELF sm_75", "ELF sm_90a", "ELF sm_100"}));
  for (const auto& e : scan.entries) EXPECT_TRUE(e.arch_from_cubin);
  EXPECT_EQ(scan.entries[0].header_arch, ComputeCapability(8, 6));
  EXPECT_EQ(scan.entries[2].header_arch, ComputeCapability(10, 0, Variant::family));
}

TEST(Fatbin, ElfFallsBackToTheHeaderWithoutF) {
  const Buffer data = fatbin_container({
      fatbin_entry({.kind = 2, .arch = 100, .flags = 0x1200011, .payload = testing::bytes_of("not a cubin")}),
      fatbin_entry({.kind = 2, .arch = 100, .flags = 0x1100011, .payload = {}}),
  });
  const FatbinScan scan = scan_all(data);
  EXPECT_EQ(names(scan), (std::vector<std::string>{"ELF sm_100", "ELF sm_100a"}));
  for (const auto& e : scan.entries) EXPECT_FALSE(e.arch_from_cubin);
}

// A compressed cubin is named from the header unless exact, then from the
// decompressed cubin (the szx.fatbin probe: header 86, cubin 80 -> sm_80).
TEST(Fatbin, CompressedElfNamedFromTheCubinOnlyWhenExact) {
  const Buffer cubin = testing::build_cubin(80, false);
  const Buffer zstd = testing::zstd_stored_frame(cubin);
  const Buffer lz4 = testing::lz4_literal_block(cubin);
  const auto size = [](const Buffer& b) { return static_cast<std::uint32_t>(b.size()); };
  const Buffer data = fatbin_container({
      fatbin_entry({.kind = 2,
                    .arch = 86,
                    .flags = 0x8011,
                    .payload = zstd,
                    .compressed_size = size(zstd),
                    .uncompressed_size = cubin.size()}),
      fatbin_entry({.kind = 2,
                    .arch = 86,
                    .flags = 0x2011,
                    .payload = lz4,
                    .compressed_size = size(lz4),
                    .uncompressed_size = cubin.size()}),
      // Broken streams, and the undocumented legacy codec, keep the header's name.
      fatbin_entry({.kind = 2,
                    .arch = 86,
                    .flags = 0x8011,
                    .payload = zstd,
                    .compressed_size = size(zstd) - 5,
                    .uncompressed_size = cubin.size()}),
      fatbin_entry({.kind = 2,
                    .arch = 86,
                    .flags = 0x2011,
                    .payload = lz4,
                    .compressed_size = size(lz4),
                    .uncompressed_size = cubin.size() + 1}),
      fatbin_entry({.kind = 2,
                    .arch = 86,
                    .flags = 0x1011,
                    .payload = lz4,
                    .compressed_size = size(lz4),
                    .uncompressed_size = cubin.size()}),
  });
  const FatbinScan quick = scan_all(data);
  EXPECT_FALSE(quick.damage);
  EXPECT_EQ(names(quick), std::vector<std::string>(5, "ELF sm_86"));
  EXPECT_EQ(quick.entries[0].compressed_size, zstd.size());
  EXPECT_EQ(quick.entries[0].uncompressed_size, cubin.size());
  const FatbinScan exact = scan_all(data, true);
  EXPECT_FALSE(exact.damage);
  EXPECT_EQ(names(exact), (std::vector<std::string>{"ELF sm_80", "ELF sm_80", "ELF sm_86", "ELF sm_86", "ELF sm_86"}));
  EXPECT_TRUE(exact.entries[0].arch_from_cubin);
  EXPECT_TRUE(exact.entries[1].arch_from_cubin);
  EXPECT_FALSE(exact.entries[2].arch_from_cubin);
}

TEST(Fatbin, IdentifierFromTheHeaderTail) {
  const Buffer data = fatbin_container({fatbin_entry({.kind = 2, .arch = 80, .identifier = "dir/foo.cu"}),
                                        fatbin_entry({.kind = 1, .arch = 80, .identifier = "m.cu k.cu "})});
  const FatbinScan scan = scan_all(data);
  ASSERT_EQ(scan.entries.size(), 2u);
  EXPECT_EQ(scan.entries[0].identifier, "dir/foo.cu");
  EXPECT_EQ(scan.entries[0].header_size, 80u);
  EXPECT_EQ(scan.entries[1].identifier, "m.cu k.cu ");
}

TEST(Fatbin, OffsetsAreRelativeToTheDataAndContainersSitBackToBack) {
  const Buffer first = fatbin_container({ptx(75), ptx(80)});
  const Buffer second = fatbin_container({ptx(86)});
  const Buffer data = testing::concat({Buffer(24, std::byte{0xee}), first, second, Buffer(8, std::byte{0xee})});
  const FatbinScan scan = scan_fatbins(data, 24, 24 + first.size() + second.size());
  EXPECT_FALSE(scan.damage);
  EXPECT_EQ(scan.containers, 2u);
  ASSERT_EQ(scan.entries.size(), 3u);
  EXPECT_EQ(scan.entries[0].offset, 24u + 16);
  EXPECT_EQ(scan.entries[1].offset, 24u + 16 + scan.entries[0].header_size + scan.entries[0].payload_size);
  EXPECT_EQ(scan.entries[2].offset, 24u + first.size() + 16);
  EXPECT_EQ(names(scan), (std::vector<std::string>{"PTX sm_75", "PTX sm_80", "PTX sm_86"}));
}

TEST(Fatbin, EmptyRangesAndContainers) {
  const Buffer data = fatbin_container({});
  const FatbinScan empty_container = scan_all(data);
  EXPECT_EQ(empty_container.containers, 1u);
  EXPECT_TRUE(empty_container.entries.empty());
  EXPECT_FALSE(empty_container.damage);
  const FatbinScan nothing = scan_fatbins(data, 8, 8);
  EXPECT_EQ(nothing.containers, 0u);
  EXPECT_FALSE(nothing.damage);
  const FatbinScan outside = scan_fatbins(data, 0, data.size() + 1);
  ASSERT_TRUE(outside.damage);
  EXPECT_EQ(outside.damage->what, "fatbin range lies outside the data");
  EXPECT_TRUE(scan_fatbins(data, 9, 8).damage);
}

// cuobjdump skips zero padding between containers (gap.fatbin, hgap.o).
TEST(Fatbin, ZeroPaddingIsSkipped) {
  const Buffer one = fatbin_container({ptx(80)});
  const Buffer data = testing::concat({one, Buffer(8), one, Buffer(24), one, Buffer(5)});
  const FatbinScan scan = scan_all(data);
  EXPECT_FALSE(scan.damage) << scan.damage->what;
  EXPECT_EQ(scan.containers, 3u);
  EXPECT_EQ(scan.entries.size(), 3u);
}

// Non-zero junk stops the walk; what came before stays listed (junk.fatbin).
TEST(Fatbin, JunkBetweenContainersIsDamageAfterTheEntriesBeforeIt) {
  const Buffer one = fatbin_container({ptx(80), ptx(90)});
  const Buffer data = testing::concat({one, Buffer(8, std::byte{0x01}), one});
  const FatbinScan scan = scan_all(data);
  EXPECT_EQ(scan.entries.size(), 2u);
  EXPECT_EQ(scan.containers, 1u);
  ASSERT_TRUE(scan.damage);
  EXPECT_EQ(scan.damage->offset, one.size());
  EXPECT_EQ(scan.damage->what, "invalid fatbin header");
  // Zeros that do not fill an 8-byte step before the magic are junk too.
  const FatbinScan misaligned = scan_all(testing::concat({one, Buffer(4), one}));
  ASSERT_TRUE(misaligned.damage);
  EXPECT_EQ(misaligned.damage->offset, one.size());
  // So is a tail too short for a container header that is not all zeros.
  const FatbinScan tail = scan_all(testing::concat({one, Buffer{std::byte{0x50}, std::byte{0xed}}}));
  ASSERT_TRUE(tail.damage);
  EXPECT_EQ(tail.damage->offset, one.size());
}

// A container whose fat size runs past the end lists nothing (trunc.fatbin).
TEST(Fatbin, TruncatedContainerIsDamageAndListsNothingOfIt) {
  const Buffer one = fatbin_container({ptx(80), ptx(90)});
  Buffer data = testing::concat({one, one});
  data.resize(data.size() - 8);
  const FatbinScan scan = scan_all(data);
  EXPECT_EQ(names(scan), (std::vector<std::string>{"PTX sm_80", "PTX sm_90"}));
  ASSERT_TRUE(scan.damage);
  EXPECT_EQ(scan.damage->offset, one.size());
  EXPECT_NE(scan.damage->what.find("truncated fatbin container"), std::string::npos) << scan.damage->what;
  // A fat size that wraps around 64 bits is the same damage.
  Buffer wraps = one;
  testing::patch_le(wraps, 8, ~std::uint64_t{0} - 8, 8);
  EXPECT_NE(scan_all(wraps).damage->what.find("truncated fatbin container"), std::string::npos);
  // And a container header under 16 bytes cannot hold its fields.
  Buffer small = one;
  testing::patch_le(small, 6, 8, 2);
  EXPECT_NE(scan_all(small).damage->what.find("header size 8"), std::string::npos);
}

TEST(Fatbin, ContainerHeaderSizeIsHonoured) {
  // A 24-byte container header: the entries start at +24, not +16.
  Buffer body = ptx(80);
  testing::ByteWriter w;
  w.u32(0xBA55ED50u).u16(1).u16(24).u64(body.size()).u64(0).bytes(body);
  const FatbinScan scan = scan_all(w.data());
  EXPECT_FALSE(scan.damage);
  ASSERT_EQ(scan.entries.size(), 1u);
  EXPECT_EQ(scan.entries[0].offset, 24u);
}

// Damage inside a container, each after a good entry that stays listed.
FatbinScan after_good_entry(const EntrySpec& bad) { return scan_all(fatbin_container({ptx(75), fatbin_entry(bad)})); }

TEST(Fatbin, EntryHeaderSizeMustBeAtLeast64AndAMultipleOf8) {
  for (const std::uint32_t header_size : {0u, 8u, 56u, 68u}) {
    const FatbinScan scan = after_good_entry({.kind = 1, .payload = Buffer(64), .header_size = header_size});
    EXPECT_EQ(scan.entries.size(), 1u) << header_size;
    ASSERT_TRUE(scan.damage) << header_size;
    EXPECT_EQ(scan.damage->what, "invalid fatbin entry header size " + std::to_string(header_size));
    EXPECT_EQ(scan.damage->offset, 16u + scan.entries[0].header_size + scan.entries[0].payload_size + 4);
  }
}

TEST(Fatbin, PayloadPastTheContainerIsDamage) {
  for (const std::uint64_t payload_size : {std::uint64_t{4096}, ~std::uint64_t{0} - 32, ~std::uint64_t{0}}) {
    const FatbinScan scan = after_good_entry({.kind = 1, .payload = Buffer(8), .payload_size = payload_size});
    EXPECT_EQ(scan.entries.size(), 1u);
    ASSERT_TRUE(scan.damage);
    EXPECT_EQ(scan.damage->what, "fatbin entry payload runs past the end of its container");
  }
  // A header bigger than what is left of the container is the same damage.
  const FatbinScan big_header = after_good_entry({.kind = 1, .payload = Buffer(8), .header_size = 1024});
  ASSERT_TRUE(big_header.damage);
  EXPECT_EQ(big_header.damage->what, "fatbin entry payload runs past the end of its container");
}

TEST(Fatbin, IdentifierOutsideTheHeaderIsDamage) {
  for (const std::uint32_t off : {72u, 0xfffffff0u}) {
    const FatbinScan scan = after_good_entry({.kind = 1, .identifier = "k.cu.k.cu.k.cu", .ident_off = off});
    EXPECT_EQ(scan.entries.size(), 1u);
    ASSERT_TRUE(scan.damage);
    EXPECT_EQ(scan.damage->what, "fatbin entry identifier lies outside its header");
  }
}

TEST(Fatbin, CompressedSizeBeyondThePayloadIsDamage) {
  const FatbinScan scan = after_good_entry(
      {.kind = 1, .flags = 0x8011, .payload = Buffer(16), .compressed_size = 17, .uncompressed_size = 64});
  EXPECT_EQ(scan.entries.size(), 1u);
  ASSERT_TRUE(scan.damage);
  EXPECT_EQ(scan.damage->what, "fatbin entry compressed size exceeds its payload");
}

TEST(Fatbin, EntryHeaderCutByTheContainerIsDamage) {
  Buffer partial = ptx(80);
  partial.resize(40);
  const FatbinScan scan = scan_all(fatbin_container({ptx(75), partial}));
  EXPECT_EQ(scan.entries.size(), 1u);
  ASSERT_TRUE(scan.damage);
  EXPECT_EQ(scan.damage->what, "truncated fatbin entry header");
}

}  // namespace
}  // namespace orc::inspect
