// The fatbin walk on real nvcc 13.0 output and on byte-patched copies of it,
// the same probes fatbin-format.md Appendix A ran through cuobjdump 13.0; the
// expected names are cuobjdump's. Skipped without nvcc 13.
#include <gtest/gtest.h>

#include "orchestrator/inspect/elf.hpp"
#include "orchestrator/inspect/fatbin.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"
#include "tests/unit/inspect/nvcc_outputs.hpp"

namespace orc::inspect {
namespace {

using arch::ComputeCapability;
using arch::Variant;
using testing::Buffer;

FatbinScan scan_all(const Buffer& data, bool exact = false) {
  return scan_fatbins(data, 0, data.size(), {.exact = exact});
}

std::vector<std::string> names(const FatbinScan& scan) {
  std::vector<std::string> out;
  for (const auto& e : scan.entries)
    out.push_back(std::string(e.kind == EntryKind::elf   ? "ELF "
                              : e.kind == EntryKind::ptx ? "PTX "
                                                         : "other ") +
                  e.arch.sm());
  return out;
}

// The scan of a host ELF's section, or an empty scan with a test failure.
FatbinScan scan_section(const Buffer& data, std::string_view section, bool exact = false) {
  const auto elf = parse_elf(data);
  if (!elf) {
    ADD_FAILURE() << elf.error().damage.what;
    return {};
  }
  const Section* s = elf->find(section);
  if (!s) {
    ADD_FAILURE() << "no " << section;
    return {};
  }
  return scan_fatbins(data, s->offset, s->offset + s->size, {.exact = exact});
}

// multi.fatbin (A.1): ELF sm_75, sm_90a, sm_100 (built as sm_100f), sm_120;
// PTX sm_90a, sm_100f, sm_120.
TEST(FatbinNvcc, MultiArchFatbinNamesAsCuobjdump) {
  ORC_NVCC_OUTPUT(path, "multi.fatbin");
  const FatbinScan scan = scan_all(testing::read_file(path));
  EXPECT_FALSE(scan.damage);
  EXPECT_EQ(scan.containers, 1u);
  EXPECT_EQ(names(scan), (std::vector<std::string>{"ELF sm_75", "ELF sm_90a", "PTX sm_90a", "ELF sm_100", "PTX sm_100f",
                                                   "ELF sm_120", "PTX sm_120"}));
  for (const auto& e : scan.entries) {
    if (e.kind != EntryKind::elf) continue;
    EXPECT_EQ(e.compression, Compression::none);
    EXPECT_TRUE(e.arch_from_cubin) << e.arch.sm();
  }
  EXPECT_EQ(scan.entries[1].arch, ComputeCapability(9, 0, Variant::arch_specific)) << "9.0a from the cubin";
  EXPECT_EQ(scan.entries[3].header_arch, ComputeCapability(10, 0, Variant::family));
  EXPECT_EQ(scan.entries[3].arch, ComputeCapability(10, 0)) << "ELF names never carry 'f'";
  EXPECT_EQ(scan.entries[4].arch, ComputeCapability(10, 0, Variant::family)) << "PTX keeps 'f'";
  EXPECT_EQ(scan.entries[4].compression, Compression::zstd);
}

// mx.fatbin and px.fatbin (A.2/A.3): a patched header does not rename an
// uncompressed ELF (the cubin decides) but does rename PTX (the header decides).
TEST(FatbinNvcc, PatchedHeadersRenamePtxButNotElf) {
  ORC_NVCC_OUTPUT(path, "multi.fatbin");
  Buffer data = testing::read_file(path);
  const FatbinScan before = scan_all(data);
  ASSERT_EQ(before.entries.size(), 7u);
  testing::patch_le(data, before.entries[0].offset + 0x1C, 86, 4);  // sm_75 ELF says 86
  testing::patch_le(data, before.entries[1].offset + 0x28, before.entries[1].flags & ~0x100000ull,
                    8);  // sm_90a ELF loses 'a'
  testing::patch_le(data, before.entries[2].offset + 0x28, before.entries[2].flags & ~0x100000ull,
                    8);  // compute_90a PTX too
  const FatbinScan after = scan_all(data);
  EXPECT_EQ(names(after), (std::vector<std::string>{"ELF sm_75", "ELF sm_90a", "PTX sm_90", "ELF sm_100", "PTX sm_100f",
                                                    "ELF sm_120", "PTX sm_120"}));
  EXPECT_EQ(after.entries[0].header_arch, ComputeCapability(8, 6));
}

// -Xfatbin=-compress-all: the cubin is zstd; exact decompresses and names it
// from the cubin, even when the header lies (szx.fatbin: 86 in the header).
TEST(FatbinNvcc, CompressedCubinNamedFromTheCubinWhenExact) {
  ORC_NVCC_OUTPUT(path, "all.fatbin");
  Buffer data = testing::read_file(path);
  const FatbinScan quick = scan_all(data);
  ASSERT_EQ(names(quick), (std::vector<std::string>{"ELF sm_80", "PTX sm_80"}));
  EXPECT_EQ(quick.entries[0].compression, Compression::zstd);
  EXPECT_FALSE(quick.entries[0].arch_from_cubin);
  EXPECT_GT(quick.entries[0].uncompressed_size, quick.entries[0].compressed_size);
  const FatbinScan exact = scan_all(data, true);
  EXPECT_TRUE(exact.entries[0].arch_from_cubin);
  EXPECT_EQ(exact.entries[0].arch, ComputeCapability(8, 0));

  testing::patch_le(data, quick.entries[0].offset + 0x1C, 86, 4);
  EXPECT_EQ(names(scan_all(data)), (std::vector<std::string>{"ELF sm_86", "PTX sm_80"}));
  EXPECT_EQ(names(scan_all(data, true)), (std::vector<std::string>{"ELF sm_80", "PTX sm_80"}));
}

TEST(FatbinNvcc, SpeedModeCompressesPtxWithLz4) {
  ORC_NVCC_OUTPUT(path, "speed.fatbin");
  const FatbinScan scan = scan_all(testing::read_file(path));
  ASSERT_EQ(names(scan), (std::vector<std::string>{"ELF sm_80", "PTX sm_80"}));
  EXPECT_EQ(scan.entries[0].compression, Compression::none);
  EXPECT_EQ(scan.entries[1].compression, Compression::lz4);
  ORC_NVCC_OUTPUT(all_path, "speed-all.fatbin");
  const FatbinScan all = scan_all(testing::read_file(all_path), true);
  ASSERT_FALSE(all.entries.empty());
  EXPECT_EQ(all.entries[0].compression, Compression::lz4);
  EXPECT_TRUE(all.entries[0].arch_from_cubin) << "LZ4 cubins decompress for exact naming too";
}

// nvcc -G: compressed debug images with identifier "k.cu" (A.2 tg).
TEST(FatbinNvcc, DebugBuildCarriesAnIdentifier) {
  ORC_NVCC_OUTPUT(path, "debug.fatbin");
  const FatbinScan scan = scan_all(testing::read_file(path), true);
  ASSERT_EQ(names(scan), (std::vector<std::string>{"ELF sm_80", "PTX sm_80"}));
  for (const auto& e : scan.entries) EXPECT_EQ(e.identifier, "k.cu");
  EXPECT_EQ(scan.entries[0].compression, Compression::zstd);
  EXPECT_TRUE(scan.entries[0].arch_from_cubin);
}

// cat.fatbin, gap.fatbin, junk.fatbin and trunc.fatbin (A.2/A.3).
TEST(FatbinNvcc, ConcatenatedPaddedJunkAndTruncatedFiles) {
  ORC_NVCC_OUTPUT(path, "plain.fatbin");
  const Buffer one = testing::read_file(path);
  const FatbinScan cat = scan_all(testing::concat({one, one}));
  EXPECT_FALSE(cat.damage);
  EXPECT_EQ(cat.containers, 2u);
  EXPECT_EQ(names(cat), (std::vector<std::string>{"ELF sm_80", "PTX sm_80", "ELF sm_80", "PTX sm_80"}));

  const FatbinScan gap = scan_all(testing::concat({one, Buffer(8), one}));
  EXPECT_FALSE(gap.damage);
  EXPECT_EQ(gap.entries.size(), 4u);

  const FatbinScan junk = scan_all(testing::concat({one, Buffer(8, std::byte{0x01}), one}));
  EXPECT_EQ(names(junk), (std::vector<std::string>{"ELF sm_80", "PTX sm_80"}));
  ASSERT_TRUE(junk.damage);
  EXPECT_EQ(junk.damage->offset, one.size());
  EXPECT_EQ(junk.damage->what, "invalid fatbin header");

  ASSERT_GT(one.size(), 1000u);
  const Buffer cut(one.begin(), one.begin() + 1000);
  const FatbinScan trunc = scan_all(cut);
  EXPECT_TRUE(trunc.entries.empty());
  ASSERT_TRUE(trunc.damage);
  EXPECT_EQ(trunc.damage->offset, 0u);
}

// Objects: .nv_fatbin (k.o), __nv_relfatbin with a zstd cubin (kr.o, -rdc),
// and an LTO-IR entry next to PTX (kd.o, -dlto). Offsets are file offsets.
TEST(FatbinNvcc, ObjectSections) {
  ORC_NVCC_OUTPUT(k, "k.o");
  ORC_NVCC_OUTPUT(kr, "kr.o");
  ORC_NVCC_OUTPUT(kd, "kd.o");
  const Buffer object = testing::read_file(k);
  const FatbinScan plain = scan_section(object, ".nv_fatbin");
  EXPECT_EQ(names(plain), (std::vector<std::string>{"ELF sm_80", "PTX sm_80"}));
  const auto object_elf = parse_elf(object);
  const Section* section = object_elf->find(".nv_fatbin");
  ASSERT_FALSE(plain.entries.empty());
  EXPECT_EQ(plain.entries[0].offset, section->offset + 16);
  EXPECT_EQ(read_le<std::uint16_t>(object, plain.entries[0].offset), 2) << "kind 2 at the entry offset";

  const FatbinScan rdc = scan_section(testing::read_file(kr), "__nv_relfatbin", true);
  EXPECT_EQ(names(rdc), (std::vector<std::string>{"ELF sm_80", "PTX sm_80"}));
  ASSERT_FALSE(rdc.entries.empty());
  EXPECT_EQ(rdc.entries[0].compression, Compression::zstd);
  EXPECT_TRUE(rdc.entries[0].arch_from_cubin);

  const FatbinScan lto = scan_section(testing::read_file(kd), "__nv_relfatbin", true);
  EXPECT_FALSE(lto.damage);
  EXPECT_EQ(names(lto), (std::vector<std::string>{"PTX sm_80", "other sm_80"}));
  ASSERT_EQ(lto.entries.size(), 2u);
  EXPECT_EQ(lto.entries[1].kind, EntryKind::lto_ir);
}

// libcublasLt.so.13 (CUDA 13.0): cuobjdump 13.0 lists 5449 ELF and 288 PTX
// entries from its .nv_fatbin. Every cubin there is zstd; decompressed, each
// must be named as its header names it (fatbin-format.md 5.2: the two agree
// for everything the toolchain produces).
TEST(FatbinNvcc, CublasLtCountsAndNamesAgree) {
  const std::filesystem::path path = "/usr/local/cuda/lib64/libcublasLt.so.13";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  const Buffer data = testing::read_file(path);
  const FatbinScan scan = scan_section(data, ".nv_fatbin", true);
  EXPECT_FALSE(scan.damage);
  std::size_t elf = 0, ptx = 0, from_cubin = 0;
  for (const auto& e : scan.entries) {
    if (e.kind == EntryKind::ptx) ++ptx;
    if (e.kind != EntryKind::elf) continue;
    ++elf;
    if (!e.arch_from_cubin) continue;
    ++from_cubin;
    const Variant header_variant = e.header_arch.variant() == Variant::family ? Variant::none : e.header_arch.variant();
    EXPECT_EQ(e.arch, e.header_arch.with(header_variant))
        << "entry at " << e.offset << ": cubin " << e.arch.sm() << ", header " << e.header_arch.sm();
  }
  EXPECT_EQ(elf, 5449u);
  EXPECT_EQ(ptx, 288u);
  EXPECT_EQ(from_cubin, elf) << "every cubin, compressed or not, is read";
}

}  // namespace
}  // namespace orc::inspect
