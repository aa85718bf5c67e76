// The Packages index as it streams in (issue 28): the same answer however
// the bytes are split, only the wanted packages kept, and every hostile
// shape (a field longer than any package's, a bomb, a dictionary of 4 GiB,
// damage, a stream cut short) an error that says what it is.
#include "orchestrator/watch/packages_index.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/watch/compress.hpp"

namespace orc::watch {
namespace {

using testing::gz_of;
using testing::xz_of;
using Newest = std::map<std::string, std::string, std::less<>>;

const std::vector<std::string> k_wanted = {"nvidia-cuda-toolkit", "g++-13", "cmake"};

// Stanzas as Debian writes them, with what a real index has around ours: a
// long Description, CRLF, an arm64 build, older and newer revisions.
std::string sample_index() {
  return "Package: nvidia-cuda-toolkit\nVersion: 12.4.131~12.4.1-2\nArchitecture: amd64\n"
         "Description: NVIDIA CUDA development toolkit\n " +
         std::string(6000, 'x') +
         "\n .\n\n"
         "Package: nvidia-cuda-toolkit\r\nVersion: 12.4.131~12.4.1-10\r\nArchitecture: amd64\r\n\r\n"
         "Package: nvidia-cuda-toolkit\nVersion: 12.9.1~12.9.1-1\nArchitecture: arm64\n\n"
         "Package: cmake\nArchitecture: amd64\nVersion: 3.31.6-2\nProvides: " +
         std::string(9000, 'p') +
         "\n\n"
         "Package: libfoo1\nVersion: 1.0\nArchitecture: amd64\n\n"
         "Package: g++-13\nVersion: 13.3.0-16\nArchitecture: amd64";  // no newline at the end
}

// Feeds `bytes` in pieces of `piece` bytes.
std::expected<IndexSummary, std::string> read_in_pieces(std::string_view bytes, IndexCompression compression,
                                                        std::size_t piece) {
  PackagesIndexReader reader(compression, k_wanted);
  for (std::size_t at = 0; at < bytes.size(); at += piece)
    if (auto fed = reader.feed(bytes.substr(at, piece)); !fed) return std::unexpected(fed.error());
  if (auto done = reader.finish(); !done) return std::unexpected(done.error());
  return IndexSummary{.newest = reader.newest(), .stanzas = reader.stanzas()};
}

TEST(PackagesIndex, AnySplitOfAnyCompressionGivesTheSameAnswer) {
  const std::string text = sample_index();
  const std::pair<IndexCompression, std::string> served[] = {
      {IndexCompression::none, text}, {IndexCompression::gzip, gz_of(text)}, {IndexCompression::xz, xz_of(text)}};
  for (const auto& [compression, bytes] : served)
    for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, bytes.size()}) {
      const auto read = read_in_pieces(bytes, compression, piece);
      ASSERT_TRUE(read) << read.error();
      EXPECT_EQ(read->newest,
                (Newest{{"cmake", "3.31.6-2"}, {"g++-13", "13.3.0-16"}, {"nvidia-cuda-toolkit", "12.4.131~12.4.1-10"}}))
          << static_cast<int>(compression) << " in pieces of " << piece;
      EXPECT_EQ(read->stanzas, 6u);
    }
}

TEST(PackagesIndex, AFieldOfOursLongerThanAnyPackagesIsNoPackage) {
  const std::string long_name = std::string(PackagesIndexReader::k_max_line, 'n');
  const std::string text = "Package: " + long_name + "\nVersion: 1\nArchitecture: amd64\n\n" +
                           "Package: cmake\nVersion: 9." + std::string(5000, '9') + "\nArchitecture: amd64\n\n" +
                           // A line of blanks longer than the kept start is no stanza break.
                           "Package: g++-13\nVersion: 13.3.0-16\n" + std::string(5000, ' ') + "\nArchitecture: amd64\n";
  for (std::size_t piece : {std::size_t{3}, text.size()}) {
    const auto read = read_in_pieces(text, IndexCompression::none, piece);
    ASSERT_TRUE(read) << read.error();
    EXPECT_EQ(read->newest, (Newest{{"g++-13", "13.3.0-16"}})) << "pieces of " << piece;
    EXPECT_EQ(read->stanzas, 1u);
  }
}

TEST(PackagesIndex, TextPastTheCapIsRefusedAsItArrives) {
  // 513 gzip members of 1 MiB each: gzip -d reads them as one file of
  // 513 MiB, made here from one 1 MiB member.
  const std::string member = gz_of(std::string(std::size_t{1} << 20, 'a'));
  PackagesIndexReader reader(IndexCompression::gzip, k_wanted);
  std::expected<void, std::string> fed;
  std::size_t members = 0;
  for (; members < 600 && fed; ++members) fed = reader.feed(member);
  ASSERT_FALSE(fed);
  EXPECT_EQ(members, 513u);
  EXPECT_EQ(fed.error(),
            "more than 512 MiB once decompressed: no index of Debian's is near that (main, amd64, is "
            "about 60 MB)");
  // Nothing is taken after an error.
  EXPECT_EQ(reader.finish().error(), fed.error());
}

// An xz stream whose block header names a dictionary of 4 GiB: liblzma
// would allocate it; the reader's memory limit refuses it first.
TEST(PackagesIndex, AnXzDictionaryPastTheMemoryLimitIsRefused) {
  std::string bytes = xz_of("Package: cmake\nVersion: 1\nArchitecture: amd64\n");
  // Stream header (12 bytes), then the block header: its size byte, flags,
  // then the LZMA2 filter (ID 0x21, one property byte: the dictionary size).
  const std::size_t header = 12;
  const std::size_t header_size = (static_cast<unsigned char>(bytes[header]) + 1) * 4;
  const std::size_t filter = bytes.find("\x21\x01", header + 2);
  ASSERT_LT(filter, header + header_size);
  bytes[filter + 2] = 40;  // 4 GiB - 1
  const std::uint32_t crc =
      lzma_crc32(reinterpret_cast<const std::uint8_t*>(bytes.data() + header), header_size - 4, 0);
  for (int i = 0; i < 4; ++i) bytes[header + header_size - 4 + i] = static_cast<char>(crc >> (8 * i));
  const auto read = read_packages_index(bytes, IndexCompression::xz, k_wanted);
  ASSERT_FALSE(read);
  EXPECT_TRUE(read.error().starts_with("the xz stream needs 409")) << read.error();
  EXPECT_NE(read.error().find(" MiB to decompress (its dictionary size), more than the 80 MiB allowed"),
            std::string::npos)
      << read.error();
}

TEST(PackagesIndex, DamageAndShortStreamsAreErrorsThatSayWhere) {
  const std::string text = sample_index();
  std::string gz = gz_of(text);
  gz[gz.size() / 2] = static_cast<char>(gz[gz.size() / 2] ^ 0x55);
  const auto damaged = read_packages_index(gz, IndexCompression::gzip, k_wanted);
  ASSERT_FALSE(damaged);
  EXPECT_TRUE(damaged.error().starts_with("the gzip data is damaged at byte ")) << damaged.error();

  const std::string full = gz_of(text);
  const auto cut =
      read_packages_index(std::string_view(full).substr(0, full.size() - 6), IndexCompression::gzip, k_wanted);
  ASSERT_FALSE(cut);
  EXPECT_TRUE(cut.error().starts_with("the gzip stream is cut short")) << cut.error();

  std::string xz = xz_of(text);
  xz[xz.size() / 2] = static_cast<char>(xz[xz.size() / 2] ^ 0x55);
  const auto bad_xz = read_packages_index(xz, IndexCompression::xz, k_wanted);
  ASSERT_FALSE(bad_xz);
  EXPECT_TRUE(bad_xz.error().starts_with("the xz data is damaged at byte ")) << bad_xz.error();

  const auto empty = read_packages_index("", IndexCompression::xz, k_wanted);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error(), "not xz-compressed (0 bytes in all)");
  // A plain index may be empty: an empty component.
  const auto plain = read_packages_index("", IndexCompression::none, k_wanted);
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_EQ(plain->stanzas, 0u);
}

TEST(PackagesIndex, ABodyPastTheServedCapIsRefused) {
  PackagesIndexReader reader(IndexCompression::none, k_wanted);
  const std::string mib(std::size_t{1} << 20, 'a');
  std::expected<void, std::string> fed;
  std::size_t fed_mib = 0;
  for (; fed_mib < 300 && fed; ++fed_mib) fed = reader.feed(mib);
  ASSERT_FALSE(fed);
  EXPECT_EQ(fed_mib, 257u);
  EXPECT_TRUE(fed.error().starts_with("more than 256 MiB as served")) << fed.error();
}

}  // namespace
}  // namespace orc::watch
