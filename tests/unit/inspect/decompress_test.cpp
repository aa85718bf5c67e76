// The payload decoders: hand-built LZ4 blocks and zstd frames for each rule
// (exact output size, the size cap, truncation, garbage), and nvcc's own
// compressed cubins, which must decode to the bytes of the uncompressed build.
#include "orchestrator/inspect/decompress.hpp"

#include <gtest/gtest.h>

#include "orchestrator/inspect/fatbin.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"
#include "tests/unit/inspect/nvcc_outputs.hpp"

namespace orc::inspect {
namespace {

using testing::Buffer;
using testing::ByteWriter;

Buffer pattern(std::size_t n) {
  Buffer b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = std::byte(static_cast<std::uint8_t>(i * 7 + i / 251));
  return b;
}

std::string error_of(const std::expected<std::vector<std::byte>, std::string>& r) {
  return r ? std::string("(decoded ") + std::to_string(r->size()) + " bytes)" : r.error();
}

TEST(Lz4, LiteralBlockDecodesExactly) {
  // 300 literals need two length-extension bytes (15 + 255 + 30), the case
  // some hand-written decoders get wrong.
  const Buffer content = pattern(300);
  const auto out = decompress_lz4_block(testing::lz4_literal_block(content), content.size());
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(*out, content);
}

TEST(Lz4, OverlappingMatchRepeatsThePattern) {
  // "ab", then a match at offset 2 of length 100 (4 + 15 + 81), then 5 literals.
  ByteWriter w;
  w.u8((2 << 4) | 15).text("ab").u16(2).u8(81).u8(5 << 4).text("ZZZZZ");
  std::string expected = "ab";
  for (int i = 0; i < 50; ++i) expected += "ab";
  expected += "ZZZZZ";
  const auto out = decompress_lz4_block(w.data(), expected.size());
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(as_text(*out), expected);
}

TEST(Lz4, OutputMustBeExactlyTheExpectedSize) {
  const Buffer content = pattern(40);
  const Buffer block = testing::lz4_literal_block(content);
  EXPECT_FALSE(decompress_lz4_block(block, 41));
  EXPECT_NE(error_of(decompress_lz4_block(block, 41)).find("expected 41"), std::string::npos)
      << error_of(decompress_lz4_block(block, 41));
  EXPECT_FALSE(decompress_lz4_block(block, 39)) << "a block longer than promised must not be cut silently";
}

TEST(Lz4, RefusesSizesNoBlockCanReach) {
  const Buffer block = testing::lz4_literal_block(pattern(10));
  const auto huge = decompress_lz4_block(block, 1 << 20);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().find("cannot expand"), std::string::npos) << huge.error();
  const auto over_cap = decompress_lz4_block(block, k_max_uncompressed + 1);
  ASSERT_FALSE(over_cap);
  EXPECT_NE(over_cap.error().find("exceeds the limit"), std::string::npos) << over_cap.error();
}

TEST(Lz4, MalformedAndTruncatedBlocksFail) {
  ByteWriter far_offset;  // a match reaching before the start of the output
  far_offset.u8((1 << 4) | 4).text("x").u16(9).u8(5 << 4).text("YYYYY");
  EXPECT_FALSE(decompress_lz4_block(far_offset.data(), 14));
  Buffer cut = testing::lz4_literal_block(pattern(100));
  cut.resize(50);
  EXPECT_FALSE(decompress_lz4_block(cut, 100));
  EXPECT_FALSE(decompress_lz4_block({}, 0)) << "an empty input is not a block";
}

TEST(Zstd, StoredFrameWithDeclaredSize) {
  const Buffer content = pattern(1000);
  const auto out = decompress_zstd(testing::zstd_stored_frame(content), content.size());
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(*out, content);
}

TEST(Zstd, FrameWithoutSizeDecodesAcrossManyBlocks) {
  // 300 KiB in three blocks, no content size: the output grows as it decodes.
  const Buffer content = pattern(300 * 1024);
  const auto out = decompress_zstd(testing::zstd_stored_frame(content, false), content.size());
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(*out, content);
}

TEST(Zstd, RleBlockExpands) {
  ByteWriter w;
  w.u32(0xFD2FB528u).u8(0xE0).u64(100000).put_block_header(100000, 1, true).u8(0x5a);
  const auto out = decompress_zstd(w.data(), 100000);
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(*out, Buffer(100000, std::byte{0x5a}));
}

TEST(Zstd, OutputMustBeExactlyTheExpectedSize) {
  const Buffer content = pattern(100);
  const auto declared = decompress_zstd(testing::zstd_stored_frame(content), 99);
  ASSERT_FALSE(declared);
  EXPECT_NE(declared.error().find("declares 100 bytes"), std::string::npos) << declared.error();
  const auto more = decompress_zstd(testing::zstd_stored_frame(content, false), 50);
  ASSERT_FALSE(more);
  EXPECT_NE(more.error().find("more than"), std::string::npos) << more.error();
  const auto less = decompress_zstd(testing::zstd_stored_frame(content, false), 150);
  ASSERT_FALSE(less);
  EXPECT_NE(less.error().find("decoded to 100 bytes"), std::string::npos) << less.error();
}

TEST(Zstd, EmptyFrameDecodesToNothing) {
  const auto out = decompress_zstd(testing::zstd_stored_frame({}), 0);
  ASSERT_TRUE(out) << out.error();
  EXPECT_TRUE(out->empty());
}

TEST(Zstd, ConcatenatedFramesDecodeAsOne) {
  const Buffer a = pattern(10), b = pattern(20);
  const auto out = decompress_zstd(testing::concat({testing::zstd_stored_frame(a), testing::zstd_stored_frame(b)}), 30);
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(*out, testing::concat({a, b}));
}

TEST(Zstd, TruncatedGarbageAndOversizedFail) {
  Buffer cut = testing::zstd_stored_frame(pattern(1000), false);
  cut.resize(cut.size() - 10);
  const auto truncated = decompress_zstd(cut, 1000);
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.error().find("truncated"), std::string::npos) << truncated.error();
  const auto garbage = decompress_zstd(testing::bytes_of("this is not zstd at all"), 10);
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error(), "not a zstd frame");
  const auto over_cap = decompress_zstd(testing::zstd_stored_frame(pattern(10)), k_max_uncompressed + 1);
  ASSERT_FALSE(over_cap);
  EXPECT_NE(over_cap.error().find("exceeds the limit"), std::string::npos) << over_cap.error();
}

// The first ELF entry's payload, as stored.
std::pair<Entry, Buffer> first_elf(const Buffer& fatbin) {
  const auto scan = scan_fatbins(fatbin, 0, fatbin.size());
  for (const auto& e : scan.entries)
    if (e.kind == EntryKind::elf) {
      const auto payload = *sub(fatbin, e.offset + e.header_size, e.payload_size);
      return {e, Buffer(payload.begin(), payload.end())};
    }
  ADD_FAILURE() << "no ELF entry";
  return {};
}

// nvcc's compressed cubins (zstd from -compress-all, LZ4 from
// --compress-mode=speed) decode to the cubin of the uncompressed build.
TEST(RealPayloads, CompressedCubinsDecodeToTheUncompressedBuild) {
  ORC_NVCC_OUTPUT(plain_path, "nocompress.fatbin");
  ORC_NVCC_OUTPUT(zstd_path, "all.fatbin");
  ORC_NVCC_OUTPUT(lz4_path, "speed-all.fatbin");
  const auto [plain, plain_payload] = first_elf(testing::read_file(plain_path));
  ASSERT_EQ(plain.compression, Compression::none);
  const Buffer cubin(plain_payload.begin(), plain_payload.begin() + 4);
  EXPECT_EQ(as_text(cubin),
            "\x7f"
            "ELF");
  for (const auto& [path, codec] : {std::pair{zstd_path, Compression::zstd}, std::pair{lz4_path, Compression::lz4}}) {
    const auto [entry, payload] = first_elf(testing::read_file(path));
    ASSERT_EQ(entry.compression, codec) << path;
    const Bytes stream = *sub(payload, 0, entry.compressed_size);
    const auto out = codec == Compression::zstd ? decompress_zstd(stream, entry.uncompressed_size)
                                                : decompress_lz4_block(stream, entry.uncompressed_size);
    ASSERT_TRUE(out) << path << ": " << out.error();
    ASSERT_LE(out->size(), plain_payload.size());
    EXPECT_TRUE(std::equal(out->begin(), out->end(), plain_payload.begin())) << path;
    // The padding after an uncompressed payload is zeros only.
    EXPECT_TRUE(std::all_of(plain_payload.begin() + static_cast<std::ptrdiff_t>(out->size()), plain_payload.end(),
                            [](std::byte b) { return b == std::byte{0}; }));
  }
}

}  // namespace
}  // namespace orc::inspect
