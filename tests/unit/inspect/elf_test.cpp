// ELF section tables and cubin naming: hand-built files for each rule and
// each kind of damage, then real files (/bin/ls, nvcc's objects and cubins).
#include "orchestrator/inspect/elf.hpp"

#include <gtest/gtest.h>

#include "tests/unit/inspect/binary_fixtures.hpp"
#include "tests/unit/inspect/nvcc_outputs.hpp"

namespace orc::inspect {
namespace {

using testing::Buffer;
using testing::ElfLayout;
using testing::ElfSpec;

ElfSpec host_object(bool is64) {
  return {.is64 = is64,
          .sections = {{.name = ".text", .data = Buffer(24, std::byte{0x90})},
                       {.name = ".nv_fatbin", .data = Buffer(40, std::byte{0x50})},
                       {.name = ".bss", .type = 8, .data = Buffer(4096)}}};
}

ParseFailure failure_of(const Buffer& data) {
  const auto elf = parse_elf(data);
  if (elf) ADD_FAILURE() << "expected the ELF to be rejected";
  return elf ? ParseFailure{} : elf.error();
}

void expect_corrupt(const Buffer& data, std::string_view what) {
  const ParseFailure f = failure_of(data);
  EXPECT_EQ(f.kind, ParseFailure::Kind::corrupt);
  EXPECT_NE(f.damage.what.find(what), std::string::npos) << f.damage.what;
}

TEST(Elf, SectionTableOfBothClasses) {
  for (const bool is64 : {true, false}) {
    const Buffer data = testing::build_elf(host_object(is64));
    const auto elf = parse_elf(data);
    ASSERT_TRUE(elf) << elf.error().damage.what;
    EXPECT_EQ(elf->is64, is64);
    EXPECT_EQ(elf->machine, 62);
    ASSERT_EQ(elf->sections.size(), 5u);  // null, .text, .nv_fatbin, .bss, .shstrtab
    EXPECT_EQ(elf->sections[0].name, "");
    EXPECT_EQ(elf->sections[4].name, ".shstrtab");
    const Section* fatbin = elf->find(".nv_fatbin");
    ASSERT_NE(fatbin, nullptr);
    EXPECT_EQ(fatbin->size, 40u);
    const Bytes contents = *sub(data, fatbin->offset, fatbin->size);
    EXPECT_EQ(Buffer(contents.begin(), contents.end()), Buffer(40, std::byte{0x50}));
    EXPECT_EQ(elf->find(".bss")->size, 0u) << "SHT_NOBITS occupies no file bytes";
    EXPECT_EQ(elf->find(".nv_fatbi"), nullptr);
    EXPECT_EQ(elf->find("__nv_relfatbin"), nullptr);
  }
}

TEST(Elf, HeaderFieldsOfACubin) {
  const auto elf = parse_elf(testing::build_cubin(90, true));
  ASSERT_TRUE(elf);
  EXPECT_EQ(elf->machine, k_em_cuda);
  EXPECT_EQ(elf->abi_version, 8);
  EXPECT_EQ(elf->flags, 0x06005a04u);
}

TEST(Elf, NotAnElfIsNotThisFormat) {
  for (const Buffer& data : {Buffer{},
                             testing::bytes_of("\x7f"
                                               "EL"),
                             testing::bytes_of("!<arch>\n"), testing::bytes_of("#!/bin/sh\necho hi\n")}) {
    const auto elf = parse_elf(data);
    ASSERT_FALSE(elf);
    EXPECT_EQ(elf.error().kind, ParseFailure::Kind::not_this_format);
  }
}

TEST(Elf, BigEndianAndUnknownClassesAreRefusedClearly) {
  Buffer big = testing::build_elf(host_object(true));
  big[5] = std::byte{2};
  expect_corrupt(big, "big-endian ELF is not supported");
  Buffer odd = testing::build_elf(host_object(true));
  odd[4] = std::byte{3};
  expect_corrupt(odd, "unknown ELF class 3");
}

TEST(Elf, TruncatedHeaderIsCorrupt) {
  Buffer data = testing::build_elf(host_object(true));
  data.resize(40);
  expect_corrupt(data, "ELF header is truncated");
  data.resize(6);
  expect_corrupt(data, "identification is truncated");
}

TEST(Elf, SectionTableOutsideTheFileIsCorrupt) {
  ElfLayout layout;
  const Buffer data = testing::build_elf(host_object(true), &layout);
  Buffer past_end = data;
  const auto patch = testing::patch_le;
  patch(past_end, layout.shoff_field, data.size() + 8, 8);
  expect_corrupt(past_end, "lies outside the file");
  Buffer wraps = data;
  patch(wraps, layout.shoff_field, ~std::uint64_t{0} - 10, 8);
  expect_corrupt(wraps, "lies outside the file");
  Buffer too_many = data;
  patch(too_many, layout.shnum_field, 0xfeff, 2);
  expect_corrupt(too_many, "lies outside the file");
  Buffer cut = data;
  cut.resize(data.size() - 1);  // the table is the last thing in the file
  expect_corrupt(cut, "section table");
}

TEST(Elf, SectionDataAndNamesOutsideTheirBoundsAreCorrupt) {
  ElfLayout layout;
  const Buffer data = testing::build_elf(host_object(true), &layout);
  const auto header = [&](std::size_t index) { return layout.shoff + index * layout.shentsize; };
  const auto patch64 = [](Buffer& b, std::size_t at, std::uint64_t v) { testing::patch_le(b, at, v, 8); };
  Buffer big_section = data;
  patch64(big_section, header(2) + 32, data.size());  // .nv_fatbin sh_size
  expect_corrupt(big_section, "section 2 '.nv_fatbin' lies outside the file");
  Buffer wrap = data;
  patch64(wrap, header(2) + 24, ~std::uint64_t{0});  // sh_offset + sh_size wraps around
  expect_corrupt(wrap, "lies outside the file");
  Buffer bad_name = data;
  patch64(bad_name, header(1), 0xffff);  // sh_name (and sh_type, written back below)
  bad_name[header(1) + 4] = std::byte{1};
  expect_corrupt(bad_name, "name of section 1");
  Buffer bad_strndx = data;
  bad_strndx[layout.shstrndx_field] = std::byte{9};
  expect_corrupt(bad_strndx, "section name table index 9");
  Buffer small_entries = data;
  small_entries[58] = std::byte{32};
  expect_corrupt(small_entries, "section header size 32");
}

// Every section may point at the same name; a file that makes the names add
// up to far more than its size is refused instead of exhausting memory.
TEST(Elf, NamesSharedBeyondAnyRealTableAreCorrupt) {
  ElfSpec spec{.sections = {{.name = std::string(64 * 1024, 'n')}}};
  for (int i = 0; i < 99; ++i) spec.sections.push_back({.name = "x"});
  ElfLayout layout;
  Buffer data = testing::build_elf(spec, &layout);
  ASSERT_TRUE(parse_elf(data)) << "distinct names are fine";
  for (std::size_t i = 1; i <= 100; ++i) testing::patch_le(data, layout.shoff + i * layout.shentsize, 1, 4);
  expect_corrupt(data, "section names overlap beyond any real name table");
}

TEST(Elf, ExtendedSectionNumbering) {
  // e_shnum 0: the count is section 0's sh_size; e_shstrndx 0xffff: the name
  // table index is section 0's sh_link.
  ElfLayout layout;
  Buffer data = testing::build_elf(host_object(true), &layout);
  data[layout.shnum_field] = data[layout.shnum_field + 1] = std::byte{0};
  data[layout.shstrndx_field] = data[layout.shstrndx_field + 1] = std::byte{0xff};
  data[layout.shoff + 32] = std::byte{5};  // section 0 sh_size
  data[layout.shoff + 40] = std::byte{4};  // section 0 sh_link
  const auto elf = parse_elf(data);
  ASSERT_TRUE(elf) << elf.error().damage.what;
  ASSERT_EQ(elf->sections.size(), 5u);
  EXPECT_NE(elf->find(".nv_fatbin"), nullptr);
  EXPECT_EQ(elf->sections[0].size, 0u) << "section 0's count is not a file range";
}

TEST(Elf, NoSectionTableIsValidAndEmpty) {
  ElfLayout layout;
  Buffer data = testing::build_elf(host_object(true), &layout);
  for (std::size_t i = 0; i < 8; ++i) data[layout.shoff_field + i] = std::byte{0};
  const auto elf = parse_elf(data);
  ASSERT_TRUE(elf);
  EXPECT_TRUE(elf->sections.empty());
}

TEST(Cubin, AbiV2TakesSmFromBits8To15AndAFromNvCompat) {
  for (const int sm : {75, 90, 100, 120, 121})
    for (const bool a : {false, true}) {
      const auto arch = cubin_arch(testing::build_cubin(sm, a));
      ASSERT_TRUE(arch) << arch.error().damage.what;
      EXPECT_EQ(arch->sm, sm);
      EXPECT_EQ(arch->arch_specific, a) << sm;
    }
}

TEST(Cubin, AbiV1TakesSmFromTheLowByteAndAFrom0x800) {
  const auto plain = cubin_arch(testing::build_cubin(86, false, 7));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->sm, 86);
  EXPECT_FALSE(plain->arch_specific);
  const auto a = cubin_arch(testing::build_cubin(90, true, 7));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->sm, 90);
  EXPECT_TRUE(a->arch_specific);
  // ABI v1 also honours .nv.compat.
  ElfSpec spec{.machine = 190,
               .abi_version = 7,
               .flags = 0x005a055a,
               .sections = {{".nv.compat", testing::k_sht_cuda_compat, testing::compat_records(true)}}};
  EXPECT_TRUE(cubin_arch(testing::build_elf(spec))->arch_specific);
}

TEST(Cubin, HostElfIsNotACubin) {
  const auto arch = cubin_arch(testing::build_elf(host_object(true)));
  ASSERT_FALSE(arch);
  EXPECT_EQ(arch.error().kind, ParseFailure::Kind::not_this_format);
}

TEST(Cubin, MalformedNvCompatAndMissingSmAreCorrupt) {
  const auto with_compat = [](Buffer records) {
    return testing::build_elf({.machine = 190,
                               .abi_version = 8,
                               .flags = 0x06005a04,
                               .sections = {{".nv.compat", testing::k_sht_cuda_compat, std::move(records)}}});
  };
  Buffer sval_past_end = testing::compat_records(true);
  sval_past_end.resize(sval_past_end.size() - 1);
  EXPECT_EQ(cubin_arch(with_compat(sval_past_end)).error().kind, ParseFailure::Kind::corrupt);
  Buffer half_record = testing::compat_records(true);
  half_record.resize(2);
  EXPECT_FALSE(cubin_arch(with_compat(half_record)));
  Buffer unknown_format = testing::compat_records(true);
  unknown_format[4] = std::byte{7};
  const auto unknown = cubin_arch(with_compat(unknown_format));
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().damage.what.find("unknown .nv.compat record format 7"), std::string::npos);
  EXPECT_TRUE(cubin_arch(with_compat({}))) << "an empty .nv.compat holds no records";
  const auto no_sm = cubin_arch(testing::build_elf({.machine = 190, .abi_version = 8, .flags = 0x06000004}));
  ASSERT_FALSE(no_sm);
  EXPECT_EQ(no_sm.error().kind, ParseFailure::Kind::corrupt);
}

TEST(RealElf, BinLsParsesAndHasNoDeviceCode) {
  if (!std::filesystem::exists("/bin/ls")) GTEST_SKIP() << "/bin/ls not present";
  const Buffer data = testing::read_file("/bin/ls");
  const auto elf = parse_elf(data);
  ASSERT_TRUE(elf) << elf.error().damage.what;
  EXPECT_NE(elf->find(".text"), nullptr);
  EXPECT_NE(elf->find(".dynsym"), nullptr);
  EXPECT_EQ(elf->find(".nv_fatbin"), nullptr);
  EXPECT_EQ(elf->find("__nv_relfatbin"), nullptr);
  EXPECT_EQ(cubin_arch(data).error().kind, ParseFailure::Kind::not_this_format);
}

TEST(RealElf, ObjectsCarryTheirFatbinSection) {
  ORC_NVCC_OUTPUT(object, "k.o");
  ORC_NVCC_OUTPUT(relocatable, "kr.o");
  const Buffer obj = testing::read_file(object);
  const auto k = parse_elf(obj);
  ASSERT_TRUE(k);
  const Section* fatbin = k->find(".nv_fatbin");
  ASSERT_NE(fatbin, nullptr);
  EXPECT_EQ(read_le<std::uint32_t>(obj, fatbin->offset), 0xBA55ED50u);
  EXPECT_NE(k->find(".nvFatBinSegment"), nullptr);
  const Buffer rel = testing::read_file(relocatable);
  const auto kr = parse_elf(rel);
  ASSERT_TRUE(kr);
  EXPECT_EQ(kr->find(".nv_fatbin"), nullptr) << "-rdc objects keep device code in __nv_relfatbin only";
  ASSERT_NE(kr->find("__nv_relfatbin"), nullptr);
  EXPECT_EQ(read_le<std::uint32_t>(rel, kr->find("__nv_relfatbin")->offset), 0xBA55ED50u);
}

// cuobjdump 13.0 names these c90a.sm_90a, c90.sm_90 and c100f.sm_100
// (fatbin-format.md A.1/A.2): 'a' from .nv.compat, never 'f'.
TEST(RealElf, CubinsAreNamedAsCuobjdumpNamesThem) {
  ORC_NVCC_OUTPUT(c90a, "c90a.cubin");
  ORC_NVCC_OUTPUT(c90, "c90.cubin");
  ORC_NVCC_OUTPUT(c100f, "c100f.cubin");
  const Buffer a_bytes = testing::read_file(c90a);
  const auto a = cubin_arch(a_bytes);
  ASSERT_TRUE(a) << a.error().damage.what;
  EXPECT_EQ(a->sm, 90);
  EXPECT_TRUE(a->arch_specific);
  const auto plain = cubin_arch(testing::read_file(c90));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->sm, 90);
  EXPECT_FALSE(plain->arch_specific);
  EXPECT_EQ(parse_elf(a_bytes)->flags, parse_elf(testing::read_file(c90))->flags) << "'a' is not in ABI v2 e_flags";
  const auto f = cubin_arch(testing::read_file(c100f));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->sm, 100);
  EXPECT_FALSE(f->arch_specific);

  // c90a_noa: attribute 9 patched to 0 is listed as sm_90.
  const auto a_elf = parse_elf(a_bytes);
  const Section* compat = a_elf->find(".nv.compat");
  ASSERT_NE(compat, nullptr);
  Buffer noa = a_bytes;
  bool patched = false;
  for (std::uint64_t at = compat->offset; at + 4 <= compat->offset + compat->size; at += 4)
    if (noa[at] == std::byte{2} && noa[at + 1] == std::byte{9}) {
      EXPECT_EQ(noa[at + 2], std::byte{1});
      noa[at + 2] = std::byte{0};
      patched = true;
      break;
    }
  ASSERT_TRUE(patched) << "no attribute 9 record in the first records of .nv.compat";
  EXPECT_FALSE(cubin_arch(noa)->arch_specific);
}

}  // namespace
}  // namespace orc::inspect
