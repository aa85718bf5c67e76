// cuobjdump-style listing over files built byte by byte here: stems, line
// format, counters, identifiers, messages and exit codes. Every expectation
// is what a real cuobjdump printed (fatbin-format.md 4, appendix A; 11.8,
// 12.4 and 13.0 runs for the stems and the small-file and archive rules); the
// nvcc-built fixtures and recorded goldens are in tests/inspect.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "orchestrator/inspect/listing.hpp"

namespace orc::inspect {
namespace {

namespace fs = std::filesystem;

// ---- builders ---------------------------------------------------------

void put(std::string& b, std::size_t at, std::uint64_t value, int width) {
  if (b.size() < at + width) b.resize(at + width, '\0');
  for (int i = 0; i < width; ++i) b[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

void pad8(std::string& b) { b.resize((b.size() + 7) / 8 * 8, '\0'); }

// A cubin with no sections: EM_CUDA, and the SM where its ABI puts it.
std::string cubin(int sm, bool abi_v2 = true) {
  std::string b =
      "\x7f"
      "ELF";
  put(b, 4, 2, 1);  // ELF64
  put(b, 5, 1, 1);  // little-endian
  put(b, 6, 1, 1);
  put(b, 7, 0x41, 1);
  put(b, 8, abi_v2 ? 8 : 7, 1);
  put(b, 18, 190, 2);
  put(b, 48, abi_v2 ? 0x06000004u | (sm << 8) : 0x00000500u | sm | (sm << 16), 4);
  put(b, 52, 64, 2);
  put(b, 63, 0, 1);
  return b;
}

struct FakeEntry {
  int kind = 1;  // 1 PTX, 2 ELF, 8 LTO-IR
  int arch = 80;
  std::uint64_t flags = 0x11;
  std::string identifier;
  std::string payload;
};

FakeEntry ptx(int arch, std::uint64_t flags = 0x11) { return {1, arch, flags, "", ".version 9.0\n"}; }
FakeEntry elf(int arch) { return {2, arch, 0x11, "", cubin(arch)}; }

// One container (fatbin-format.md 2.1-2.3).
std::string container(const std::vector<FakeEntry>& entries) {
  std::string body;
  for (const FakeEntry& e : entries) {
    std::string h(64, '\0');
    put(h, 0, e.kind, 2);
    put(h, 2, 0x0101, 2);
    put(h, 0x1c, e.arch, 4);
    put(h, 0x28, e.flags, 8);
    if (!e.identifier.empty()) {
      put(h, 0x20, 0x40, 4);
      put(h, 0x24, e.identifier.size(), 4);
      h += e.identifier;
      h += '\0';
      pad8(h);
    }
    std::string payload = e.payload;
    pad8(payload);
    put(h, 4, h.size(), 4);
    put(h, 8, payload.size(), 8);
    body += h + payload;
  }
  std::string c(16, '\0');
  put(c, 0, 0xBA55ED50u, 4);
  put(c, 4, 1, 2);
  put(c, 6, 16, 2);
  put(c, 8, body.size(), 8);
  return c + body;
}

// A host ELF64 whose only sections (after the null one and .shstrtab) are
// the given name/content pairs, laid out in that order.
std::string host_elf(const std::vector<std::pair<std::string, std::string>>& sections) {
  std::string b =
      "\x7f"
      "ELF";
  put(b, 4, 2, 1);
  put(b, 5, 1, 1);
  put(b, 6, 1, 1);
  put(b, 16, 1, 2);   // ET_REL
  put(b, 18, 62, 2);  // x86-64
  put(b, 63, 0, 1);
  std::string names(1, '\0');
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // name offset, data offset
  for (const auto& [name, data] : sections) {
    pad8(b);
    ranges.push_back({names.size(), b.size()});
    names += name + '\0';
    b += data;
  }
  const std::uint64_t shstrtab_name = names.size();
  names += std::string(".shstrtab") + '\0';
  const std::uint64_t names_at = b.size();
  b += names;
  pad8(b);
  const std::uint64_t shoff = b.size();
  b.resize(shoff + 64 * (sections.size() + 2), '\0');
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const std::size_t sh = shoff + 64 * (i + 1);
    put(b, sh, ranges[i].first, 4);
    put(b, sh + 4, 1, 4);  // PROGBITS
    put(b, sh + 24, ranges[i].second, 8);
    put(b, sh + 32, sections[i].second.size(), 8);
  }
  const std::size_t sh = shoff + 64 * (sections.size() + 1);
  put(b, sh, shstrtab_name, 4);
  put(b, sh + 4, 3, 4);  // STRTAB
  put(b, sh + 24, names_at, 8);
  put(b, sh + 32, names.size(), 8);
  put(b, 40, shoff, 8);
  put(b, 58, 64, 2);
  put(b, 60, sections.size() + 2, 2);
  put(b, 62, sections.size() + 1, 2);
  return b;
}

std::string archive(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string b = "!<arch>\n";
  for (const auto& [name, data] : members) {
    char header[61];
    std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", (name + "/").c_str(), "0", "0", "0", "644",
                  data.size());
    b += std::string(header, 60) + data;
    if (data.size() % 2) b += '\n';
  }
  return b;
}

class Listing : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-listing-" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  fs::path write(const std::string& name, const std::string& bytes) {
    const fs::path p = m_dir / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  ListResult list(const fs::path& p, bool elf, bool ptx, bool all = false) {
    return list_device_code(p, ListOptions{.elf = elf, .ptx = ptx, .all_sections = all});
  }

  fs::path m_dir;
};

// ---- stems ------------------------------------------------------------

TEST(ListingStem, ReferenceTable) {
  // fatbin-format.md 4.2.
  EXPECT_EQ(listing_stem("t"), "t");
  EXPECT_EQ(listing_stem("k.o"), "k");
  EXPECT_EQ(listing_stem("multi.fatbin"), "multi");
  EXPECT_EQ(listing_stem("libk.so"), "libk");
  EXPECT_EQ(listing_stem("libk.so.13"), "libk.so");
  EXPECT_EQ(listing_stem("/usr/local/cuda/lib64/libcublasLt.so.13"), "libcublasLt.so");
  EXPECT_EQ(listing_stem("libk.a"), "libk");
}

TEST(ListingStem, OddNamesAsCuobjdump11And12PrintThem) {
  EXPECT_EQ(listing_stem(".k"), "");
  EXPECT_EQ(listing_stem(".k.o"), ".k");
  EXPECT_EQ(listing_stem("..k"), ".");
  EXPECT_EQ(listing_stem("k."), "k");
  EXPECT_EQ(listing_stem("k.."), "k.");
  EXPECT_EQ(listing_stem("a.b.c.o"), "a.b.c");
  EXPECT_EQ(listing_stem("x.dir/k"), "k");
  // Spaces split the path like an identifier, directories included.
  EXPECT_EQ(listing_stem("sp ace.o"), "sp-ace");
  EXPECT_EQ(listing_stem("a.x b.o"), "a-b");
  EXPECT_EQ(listing_stem("/tmp/my d.x/k.o"), "my-k");
  EXPECT_EQ(listing_stem(" lead.o"), "lead");
  EXPECT_EQ(listing_stem("trail .o"), "trail-");
}

TEST(IdentifierStem, SplitsOnSpacesAndJoinsStems) {
  EXPECT_EQ(identifier_stem("dir/foo.cu"), "foo");
  EXPECT_EQ(identifier_stem("a.cu b.cu"), "a-b");
  EXPECT_EQ(identifier_stem("m.cu k.cu "), "m-k");
  EXPECT_EQ(identifier_stem("k.cu"), "k");
  EXPECT_EQ(identifier_stem("  /abs/x.y.cu   z "), "x.y-z");
  EXPECT_EQ(identifier_stem(""), "");
}

// ---- lines, counters, names ---------------------------------------------

TEST_F(Listing, InterleavesKindsWithSeparateCounters) {
  const auto p = write("multi.fatbin", container({elf(75), elf(90), ptx(90, 0x108011), ptx(100, 0x208011), elf(120)}));
  const ListResult r = list(p, true, true);
  EXPECT_EQ(r.out,
            "ELF file    1: multi.1.sm_75.cubin\n"
            "ELF file    2: multi.2.sm_90.cubin\n"
            "PTX file    1: multi.1.sm_90a.ptx\n"
            "PTX file    2: multi.2.sm_100f.ptx\n"
            "ELF file    3: multi.3.sm_120.cubin\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(list(p, false, true).out, "PTX file    1: multi.1.sm_90a.ptx\nPTX file    2: multi.2.sm_100f.ptx\n");
}

TEST_F(Listing, CounterFieldWidensPastFourDigits) {
  std::vector<FakeEntry> entries(10000, FakeEntry{1, 80, 0x11, "", ""});
  const ListResult r = list(write("w.fatbin", container(entries)), false, true);
  EXPECT_EQ(r.out.substr(0, 29), "PTX file    1: w.1.sm_80.ptx\n");
  EXPECT_NE(r.out.find("\nPTX file   99: w.99.sm_80.ptx\n"), std::string::npos);
  EXPECT_NE(r.out.find("\nPTX file 9999: w.9999.sm_80.ptx\n"), std::string::npos);
  EXPECT_TRUE(r.out.ends_with("\nPTX file 10000: w.10000.sm_80.ptx\n"));
}

TEST_F(Listing, IdentifierReplacesStemAndIndexButCountsOn) {
  FakeEntry dlink = elf(80), m = elf(80), k = ptx(80);
  dlink.identifier = "m.cu k.cu ";
  m.identifier = "m.cu";
  k.identifier = "dir/k.cu";
  const ListResult r = list(write("tg", container({dlink, m, elf(80), k})), true, true);
  EXPECT_EQ(r.out,
            "ELF file    1: m-k.sm_80.cubin\n"
            "ELF file    2: m.sm_80.cubin\n"
            "ELF file    3: tg.3.sm_80.cubin\n"
            "PTX file    1: k.sm_80.ptx\n");
}

TEST_F(Listing, ContainersBackToBackWithZeroPaddingCountAcross) {
  const std::string one = container({elf(80), ptx(80)});
  const auto p = write("gap.fatbin", one + std::string(8, '\0') + one);
  EXPECT_EQ(list(p, true, false).out, "ELF file    1: gap.1.sm_80.cubin\nELF file    2: gap.2.sm_80.cubin\n");
}

TEST_F(Listing, JunkAfterEntriesIsFatalAfterListingThem) {
  const std::string one = container({elf(80), ptx(80)});
  const auto p = write("junk.fatbin", one + std::string(8, '\1') + one);
  const ListResult r = list(p, true, true);
  EXPECT_EQ(r.out, "ELF file    1: junk.1.sm_80.cubin\nPTX file    1: junk.1.sm_80.ptx\n");
  EXPECT_EQ(r.err, "cuobjdump fatal   : Invalid fatbin header in '" + p.string() + "'\n");
  EXPECT_EQ(r.exit_code, 1);
}

TEST_F(Listing, LtoIrWarnsOncePerEntryAndUnknownKindsListAsPtx) {
  FakeEntry lto = ptx(80, 0x18011), odd = ptx(80);
  lto.kind = 8;
  odd.kind = 0x40;
  const auto p = write("kd.o.fatbin", container({lto, ptx(80), lto, odd}));
  const ListResult r = list(p, true, true);
  const std::string warning =
      "cuobjdump warning : Can't deobfuscate entry '" + p.string() + "' without obfuscation key\n";
  EXPECT_EQ(r.out, "PTX file    1: kd.o.1.sm_80.ptx\nPTX file    2: kd.o.2.sm_80.ptx\n");
  EXPECT_EQ(r.err, warning + warning + "cuobjdump info    : No ELF file found to extract from '" + p.string() +
                       "'. You may try with -all option.\n");
  EXPECT_EQ(r.exit_code, 0);
}

TEST_F(Listing, EmptyContainerReportsNoEntriesOfEitherKind) {
  const auto p = write("e.fatbin", container({}));
  const ListResult r = list(p, true, true);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cuobjdump info    : No ELF file found to extract from '" + p.string() +
                       "'. You may try with -all option.\ncuobjdump info    : No PTX file found to extract from '" +
                       p.string() + "'. You may try with -all option.\n");
  EXPECT_EQ(r.exit_code, 0);
}

TEST_F(Listing, StandaloneCubinHasNoIndex) {
  const ListResult r = list(write("c75.cubin", cubin(75, false)), true, true);
  EXPECT_EQ(r.out, "ELF file    1: c75.sm_75.cubin\n");
  EXPECT_TRUE(r.err.starts_with("cuobjdump info    : No PTX file found"));
  EXPECT_EQ(list(write("c100.cubin", cubin(100)), true, false).out, "ELF file    1: c100.sm_100.cubin\n");
}

// cuobjdump 11.8, 12.4 and 13.0 strtok their copy of the path while naming the
// first entry: later names and messages see it cut at the first space.
TEST_F(Listing, SpacesInThePathNameTheFirstEntryOnlyAsCuobjdumpDoes) {
  FakeEntry g = elf(80);
  g.identifier = "g g.cu";
  const auto p = write("sp ace.fatbin", container({g, elf(70), elf(90)}));
  const ListResult r = list(p, true, true);
  EXPECT_EQ(r.out,
            "ELF file    1: g-g.sm_80.cubin\nELF file    2: sp-ace.2.sm_70.cubin\nELF file    3: sp.3.sm_90.cubin\n");
  EXPECT_EQ(r.err, "cuobjdump info    : No PTX file found to extract from '" + (m_dir / "sp").string() +
                       "'. You may try with -all option.\n");
  // Nothing named, nothing cut.
  EXPECT_EQ(list(p, false, true).err, "cuobjdump info    : No PTX file found to extract from '" + p.string() +
                                          "'. You may try with -all option.\n");
  const std::string k = host_elf({{".nv_fatbin", container({elf(70), elf(90)})}});
  const auto a = write("sp lib.a", archive({{"k.o", k}, {"k2.o", k}}));
  EXPECT_EQ(list(a, true, false).out, "\nmember " + a.string() +
                                          ":k.o:\nELF file    1: sp-lib.1.sm_70.cubin\n"
                                          "ELF file    2: sp.2.sm_90.cubin\n\nmember " +
                                          a.string() +
                                          ":k2.o:\nELF file    3: sp.3.sm_70.cubin\nELF file    4: sp.4.sm_90.cubin\n");
}

// The stem comes from the absolute path, so a space in the current
// directory shows in it (12.4, 13.0; 11.8 used the relative path as given).
TEST_F(Listing, StemComesFromTheAbsolutePath) {
  fs::create_directories(m_dir / "x y");
  std::ofstream(m_dir / "x y" / "k.fatbin", std::ios::binary) << container({elf(80), elf(90)});
  const fs::path cwd = fs::current_path();
  fs::current_path(m_dir / "x y");
  const ListResult r = list("k.fatbin", true, false);
  fs::current_path(cwd);
  EXPECT_EQ(r.out, "ELF file    1: x-k.1.sm_80.cubin\nELF file    2: x.2.sm_90.cubin\n");
}

// ---- files that hold no device code, or cannot be read -------------------

TEST_F(Listing, MissingFileIsFatal) {
  const ListResult r = list(m_dir / "nonexist", true, false);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cuobjdump fatal   : Could not open input file '" + (m_dir / "nonexist").string() + "'\n");
  EXPECT_EQ(r.exit_code, 1);
}

TEST_F(Listing, DirectoryGetsCuobjdumpsOwnMessage) {
  const ListResult r = list(m_dir, true, true);
  EXPECT_EQ(r.err, "cuobjdump fatal   : Memory allocation failure\n");
  EXPECT_EQ(r.exit_code, 1);
}

TEST_F(Listing, RelativePathsAreMadeAbsoluteButNotNormalised) {
  fs::create_directories(m_dir / "x");
  write("h.txt", "this is not device code at all\n");
  const fs::path cwd = fs::current_path();
  fs::current_path(m_dir);
  const ListResult r = list("./x/../h.txt", true, false);
  fs::current_path(cwd);
  EXPECT_EQ(r.err, "cuobjdump info    : File '" + m_dir.string() + "/./x/../h.txt' does not contain device code\n");
  EXPECT_EQ(r.exit_code, 255);
}

TEST_F(Listing, FilesUnderSixteenBytesAreInvalidFatbins) {
  for (const std::string& bytes : {std::string(), std::string("x"),
                                   std::string("\x7f"
                                               "ELF"),
                                   std::string("!<arch>\n")}) {
    const auto p = write("small", bytes);
    const ListResult r = list(p, true, true);
    EXPECT_EQ(r.err, "cuobjdump fatal   : Invalid fatbin header in '" + p.string() + "'\n") << bytes.size();
    EXPECT_EQ(r.exit_code, 1);
  }
}

TEST_F(Listing, TextAndBrokenElfHoldNoDeviceCode) {
  for (const std::string& bytes : {std::string("0123456789abcdef"), cubin(80).substr(0, 20)}) {
    const auto p = write("k.ptx", bytes);
    const ListResult r = list(p, true, true);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "cuobjdump info    : File '" + p.string() + "' does not contain device code\n");
    EXPECT_EQ(r.exit_code, 255);
  }
}

// ---- host ELF sections --------------------------------------------------

TEST_F(Listing, ExecutableFatbinFirstEvenWhenRelocatableComesFirstInTheFile) {
  const auto p = write("hrev.o", host_elf({{"__nv_relfatbin", container({elf(80), ptx(80)})},
                                           {".nv_fatbin", container({ptx(90, 0x108011)})}}));
  EXPECT_EQ(list(p, true, true).out, "PTX file    1: hrev.1.sm_90a.ptx\n");
  EXPECT_EQ(list(p, true, true, true).out,
            "PTX file    1: hrev.1.sm_90a.ptx\nELF file    1: hrev.1.sm_80.cubin\nPTX file    2: hrev.2.sm_80.ptx\n");
  const auto rel = write("kr.o", host_elf({{"__nv_relfatbin", container({elf(80)})}}));
  EXPECT_EQ(list(rel, true, false).out, "ELF file    1: kr.1.sm_80.cubin\n");
  const ListResult none = list(write("h.o", host_elf({{".data", "12345678"}})), true, true);
  EXPECT_EQ(none.exit_code, 255);
  EXPECT_TRUE(none.err.ends_with("/h.o' does not contain device code\n"));
}

// ---- archives -------------------------------------------------------------

TEST_F(Listing, ArchiveMembersUseTheArchiveStemAndCountOn) {
  const std::string k = host_elf({{".nv_fatbin", container({elf(80), ptx(80)})}});
  const auto p = write("libk.a", archive({{"k.o", k}, {"h.o", host_elf({})}, {"c.cubin", cubin(90)}, {"k2.o", k}}));
  const std::string a = p.string();
  EXPECT_EQ(list(p, true, false).out, "\nmember " + a + ":k.o:\nELF file    1: libk.1.sm_80.cubin\n\nmember " + a +
                                          ":h.o:\n\nmember " + a + ":c.cubin:\n\nmember " + a +
                                          ":k2.o:\nELF file    2: libk.2.sm_80.cubin\n");
}

TEST_F(Listing, ArchiveWalkStopsAtTheFirstMemberThatIsNotElf) {
  const std::string k = host_elf({{".nv_fatbin", container({elf(80)})}});
  const auto p = write("odd.a", archive({{"k.o", k}, {"notes.txt", "hello\n"}, {"k2.o", k}}));
  const ListResult r = list(p, true, false);
  EXPECT_EQ(r.out, "\nmember " + p.string() + ":k.o:\nELF file    1: odd.1.sm_80.cubin\n");
  EXPECT_EQ(r.exit_code, 0);
  // Nothing with a fatbin section before the stop: no device code, after the lines.
  const auto h = write("oh.a", archive({{"h.o", host_elf({})}, {"notes.txt", "hello\n"}, {"k.o", k}}));
  const ListResult rh = list(h, true, false);
  EXPECT_EQ(rh.out, "\nmember " + h.string() + ":h.o:\n");
  EXPECT_EQ(rh.err, "cuobjdump info    : File '" + h.string() + "' does not contain device code\n");
  EXPECT_EQ(rh.exit_code, 255);
}

}  // namespace
}  // namespace orc::inspect
