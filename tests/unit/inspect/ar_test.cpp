// ar archives: GNU and BSD naming, symbol tables left out, even padding, and
// damage that keeps the members before it; then a real `ar rcs` archive of
// nvcc objects with long names.
#include "orchestrator/inspect/ar.hpp"

#include <gtest/gtest.h>

#include "orchestrator/inspect/elf.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"
#include "tests/unit/inspect/nvcc_outputs.hpp"

namespace orc::inspect {
namespace {

using testing::ArEntry;
using testing::Buffer;

const std::vector<ArEntry> k_members = {
    {"k.o", testing::bytes_of("odd-sized!")},                           // 10 bytes
    {"tmpxft_00000253_00000000-13_k.o", testing::bytes_of("seven b")},  // long, odd
    {"tmpxft_00000253_00000000-16_k2.o", testing::bytes_of("four")},    // long, even
    {"a name with spaces.o", testing::bytes_of("x")},
};

// Each member's name and bytes, as a reader would see them.
std::vector<std::pair<std::string, std::string>> contents(const Buffer& data, const ArArchive& archive) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& m : archive.members) out.emplace_back(m.name, std::string(as_text(*sub(data, m.offset, m.size))));
  return out;
}

std::vector<std::pair<std::string, std::string>> expected(std::size_t n = k_members.size()) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(k_members[i].name, std::string(as_text(k_members[i].data)));
  return out;
}

TEST(Ar, GnuNamesShortAndLong) {
  const Buffer data = testing::gnu_ar(k_members);
  const auto archive = parse_ar(data);
  ASSERT_TRUE(archive) << archive.error().damage.what;
  EXPECT_FALSE(archive->damage);
  EXPECT_EQ(contents(data, *archive), expected()) << "symbol table and name table are not members";
}

TEST(Ar, BsdNamesFromTheStartOfTheData) {
  const Buffer data = testing::bsd_ar(k_members);
  const auto archive = parse_ar(data);
  ASSERT_TRUE(archive) << archive.error().damage.what;
  EXPECT_FALSE(archive->damage);
  EXPECT_EQ(contents(data, *archive), expected()) << "__.SYMDEF SORTED is not a member";
}

TEST(Ar, SymbolTablesOfEveryFlavourAreLeftOut) {
  testing::ByteWriter w;
  w.text("!<arch>\n");
  for (const std::string_view name : {"/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"})
    w.text(testing::ar_header(name, 4)).zeros(4);
  w.text(testing::ar_header("real.o/", 2)).text("hi");
  const auto archive = parse_ar(w.data());
  ASSERT_TRUE(archive);
  ASSERT_EQ(archive->members.size(), 1u);
  EXPECT_EQ(archive->members[0].name, "real.o");
}

TEST(Ar, EmptyArchiveAndTrailingNewline) {
  const auto empty = parse_ar(testing::bytes_of("!<arch>\n"));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->members.empty());
  EXPECT_FALSE(empty->damage);
  Buffer trailing = testing::gnu_ar({{"a.o", testing::bytes_of("ab")}});
  trailing.push_back(std::byte{'\n'});
  const auto archive = parse_ar(trailing);
  ASSERT_TRUE(archive);
  EXPECT_EQ(archive->members.size(), 1u);
  EXPECT_FALSE(archive->damage);
}

TEST(Ar, OtherFormatsAreNotArchives) {
  for (const std::string_view text : {"", "!<arch>", "!<thin>\n/               0",
                                      "\x7f"
                                      "ELF\x02\x01\x01"}) {
    const auto archive = parse_ar(testing::bytes_of(text));
    ASSERT_FALSE(archive) << text;
    EXPECT_EQ(archive.error().kind, ParseFailure::Kind::not_this_format);
  }
}

TEST(Ar, TruncatedMemberKeepsTheMembersBeforeIt) {
  const Buffer full = testing::gnu_ar(k_members);
  // Cut inside the data of the last member ("x", the last byte plus padding).
  Buffer cut_data = full;
  cut_data.resize(full.size() - 2);
  const auto archive = parse_ar(cut_data);
  ASSERT_TRUE(archive);
  EXPECT_EQ(contents(cut_data, *archive), expected(3));
  ASSERT_TRUE(archive->damage);
  EXPECT_EQ(archive->damage->offset, full.size() - 2 - 60);
  EXPECT_NE(archive->damage->what.find("is truncated"), std::string::npos) << archive->damage->what;
  // Cut inside the last member's header.
  Buffer cut_header = full;
  cut_header.resize(full.size() - 2 - 30);
  const auto header = parse_ar(cut_header);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->members.size(), 3u);
  ASSERT_TRUE(header->damage);
  EXPECT_EQ(header->damage->what, "truncated archive member header");
}

TEST(Ar, BadHeadersAreDamage) {
  const auto damaged = [](std::string header_text) {
    testing::ByteWriter w;
    w.text("!<arch>\n").text(testing::ar_header("ok.o/", 2)).text("ok").text(header_text).text("data");
    const auto archive = parse_ar(w.data());
    EXPECT_TRUE(archive);
    EXPECT_EQ(archive->members.size(), 1u) << "the member before the damage is kept";
    EXPECT_TRUE(archive->damage);
    return archive->damage ? archive->damage->what : std::string();
  };
  std::string bad_magic = testing::ar_header("x.o/", 4);
  bad_magic[58] = '!';
  EXPECT_EQ(damaged(bad_magic), "invalid archive member header");
  std::string bad_size = testing::ar_header("x.o/", 4);
  bad_size[48] = '-';
  EXPECT_EQ(damaged(bad_size), "invalid archive member size");
  std::string huge_size = testing::ar_header("x.o/", 4);
  huge_size.replace(48, 10, "9999999999");
  EXPECT_NE(damaged(huge_size).find("truncated"), std::string::npos);
  EXPECT_NE(damaged(testing::ar_header("/99", 4)).find("not in the name table"), std::string::npos);
  EXPECT_NE(damaged(testing::ar_header("#1/5", 4)).find("invalid BSD long member name"), std::string::npos);
  EXPECT_NE(damaged(testing::ar_header("#1/x", 4)).find("invalid BSD long member name"), std::string::npos);
}

TEST(Ar, LongNameReferenceBeyondTheTableIsDamage) {
  testing::ByteWriter w;
  w.text("!<arch>\n").text(testing::ar_header("//", 6)).text("ab.o/\n");
  w.text(testing::ar_header("/0", 2)).text("hi");
  w.text(testing::ar_header("/6", 2)).text("hi");
  const auto archive = parse_ar(w.data());
  ASSERT_TRUE(archive);
  ASSERT_EQ(archive->members.size(), 1u);
  EXPECT_EQ(archive->members[0].name, "ab.o");
  ASSERT_TRUE(archive->damage);
  EXPECT_EQ(archive->damage->offset, 8u + 60 + 6 + 60 + 2);
}

// Every member may reference the same long name; an archive whose names add
// up to far more than its size stops with damage instead of exhausting memory.
TEST(Ar, LongNamesSharedBeyondAnyRealTableAreDamage) {
  testing::ByteWriter w;
  const std::string name(64 * 1024, 'n');
  w.text("!<arch>\n").text(testing::ar_header("//", name.size() + 2)).text(name).text("/\n");
  for (int i = 0; i < 100; ++i) w.text(testing::ar_header("/0", 0));
  const auto archive = parse_ar(w.data());
  ASSERT_TRUE(archive);
  EXPECT_GT(archive->members.size(), 10u) << "the members before the limit are listed";
  EXPECT_LT(archive->members.size(), 100u);
  ASSERT_TRUE(archive->damage);
  EXPECT_EQ(archive->damage->what, "long member names overlap beyond any real name table");
}

// `ar rcs` of two nvcc objects whose names need the "//" table, as nvcc -lib
// names them (fatbin-format.md 1.4).
TEST(RealAr, ArchiveOfNvccObjects) {
  ORC_NVCC_OUTPUT(path, "libk.a");
  const Buffer data = testing::read_file(path);
  const auto archive = parse_ar(data);
  ASSERT_TRUE(archive) << archive.error().damage.what;
  EXPECT_FALSE(archive->damage);
  ASSERT_EQ(archive->members.size(), 2u);
  EXPECT_EQ(archive->members[0].name, "tmpxft_00000253_00000000-13_k.o");
  EXPECT_EQ(archive->members[1].name, "tmpxft_00000253_00000000-16_k2.o");
  for (const auto& m : archive->members) {
    const auto elf = parse_elf(*sub(data, m.offset, m.size));
    ASSERT_TRUE(elf) << m.name << ": " << elf.error().damage.what;
    EXPECT_NE(elf->find(".nv_fatbin"), nullptr) << m.name;
  }
}

}  // namespace
}  // namespace orc::inspect
