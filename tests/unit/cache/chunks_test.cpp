// Chunks: the layout a file of each size gets, hash_chunks against hashing
// each slice by hand, and ChunkCheck finding every byte that differs, alone
// and split over lanes on a BlockFanout's threads.
#include "orchestrator/cache/chunks.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "orchestrator/cache/fanout.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

constexpr std::uint64_t k_mib = 1 << 20;
constexpr std::uint64_t k_gib = 1ull << 30;

std::span<const std::byte> as_bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(gen());
  return out;
}

// The chunks of `data` as the manifest has them, hashed slice by slice here.
FileChunks by_hand(const std::string& data) {
  FileChunks out{.size = chunk_size_for(data.size())};
  for (std::uint64_t at = 0; out.size != 0 && at < data.size(); at += out.size)
    out.sha256.push_back(digest::sha256(as_bytes(std::string_view(data).substr(at, out.size))).hex());
  return out;
}

// Feeds `data` to every lane of `check` in `piece`-byte pieces (a lane sees
// every byte, as on a BlockFanout); whether all lanes said yes.
bool feed(ChunkCheck& check, std::string_view data, std::size_t piece) {
  bool ok = true;
  for (std::size_t i = 0; i < check.lanes(); ++i) {
    auto lane = check.lane(i);
    for (std::size_t at = 0; at < data.size(); at += piece)
      if (!lane(as_bytes(data.substr(at, piece)))) {
        ok = false;
        break;
      }
  }
  return ok;
}

TEST(Chunks, LayoutByFileSize) {
  EXPECT_EQ(chunk_size_for(0), 0u);
  EXPECT_EQ(chunk_size_for(4 * k_mib), 0u);  // one chunk: the file's digest is enough
  EXPECT_EQ(chunk_size_for(4 * k_mib + 1), 4 * k_mib);
  EXPECT_EQ(chunk_size_for(k_gib), 4 * k_mib);
  EXPECT_EQ(chunk_size_for(16 * k_gib), 4 * k_mib);  // 4096 chunks: the most a file gets
  EXPECT_EQ(chunk_size_for(16 * k_gib + 1), 8 * k_mib);
  EXPECT_EQ(chunk_size_for(4096 * k_gib), k_max_chunk);
  EXPECT_EQ(chunk_size_for(4096 * k_gib + 1), 0u);  // past 4 TiB: no chunks
  EXPECT_EQ(chunk_count(4 * k_mib + 1, 4 * k_mib), 2u);
  EXPECT_EQ(chunk_count(8 * k_mib, 4 * k_mib), 2u);
  EXPECT_EQ(chunk_count(20 * k_gib, chunk_size_for(20 * k_gib)), 2560u);
}

TEST(Chunks, LayoutProblemsAreNamed) {
  const std::string hex(64, 'a');
  EXPECT_EQ(chunk_layout_problem({.size = 4 * k_mib, .sha256 = {hex, hex, hex}}, 9 * k_mib), "");
  EXPECT_NE(chunk_layout_problem({.size = 4 * k_mib, .sha256 = {hex, hex}}, 9 * k_mib).find("2 chunk digests"),
            std::string::npos);
  EXPECT_NE(chunk_layout_problem({.size = k_mib, .sha256 = {hex, hex}}, 2 * k_mib).find("has none"), std::string::npos);
  EXPECT_NE(chunk_layout_problem({.size = 8 * k_mib, .sha256 = {hex, hex}}, 9 * k_mib).find("chunks of 4194304"),
            std::string::npos);
}

class HashChunks : public testing::TempDirTest {};

TEST_F(HashChunks, MatchesEverySliceHashedByHandOnAnyNumberOfThreads) {
  const std::string data = random_bytes(3 * 4 * k_mib + 5, 1);  // three full chunks and 5 bytes
  const auto file = write("f", data);
  const FileChunks want = by_hand(data);
  ASSERT_EQ(want.sha256.size(), 4u);
  for (unsigned threads : {0u, 1u, 3u, 16u}) {
    const auto got = hash_chunks(file, data.size(), threads);
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(*got, want) << threads << " threads";
  }
}

TEST_F(HashChunks, SmallFilesHaveNoneAndShortOrMissingFilesAreErrors) {
  const auto small = write("small", random_bytes(4 * k_mib, 2));
  const auto none = hash_chunks(small, 4 * k_mib);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, FileChunks{});
  const auto shorter = hash_chunks(small, 9 * k_mib);  // claims more than it holds
  ASSERT_FALSE(shorter);
  EXPECT_EQ(shorter.error().kind, ErrorKind::io);
  EXPECT_NE(shorter.error().message.find("shorter"), std::string::npos) << shorter.error().message;
  const auto missing = hash_chunks(m_dir / "gone", 9 * k_mib);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::io);
}

TEST(ChunkCheckTest, TheRightBytesPassOnAnyNumberOfLanesInAnyPieces) {
  const std::string data = random_bytes(5 * 4 * k_mib + 12345, 3);
  const FileChunks want = by_hand(data);
  for (std::size_t lanes : {1u, 2u, 4u, 9u}) {
    for (std::size_t piece : {std::size_t{4 * k_mib}, std::size_t{1'000'003}, std::size_t{8 * k_mib + 1}}) {
      ChunkCheck check(want, data.size(), lanes);
      EXPECT_EQ(check.lanes(), std::min<std::size_t>(lanes, want.sha256.size()));
      EXPECT_TRUE(feed(check, data, piece)) << lanes << " lanes, pieces of " << piece;
      EXPECT_EQ(check.problem(), "") << lanes << " lanes, pieces of " << piece;
    }
  }
}

TEST(ChunkCheckTest, AFlippedByteAnywhereNamesItsChunk) {
  const std::string data = random_bytes(4 * 4 * k_mib + 99, 4);
  const FileChunks want = by_hand(data);
  // The first byte, one inside chunk 2, the last byte of chunk 2, the very last.
  for (std::uint64_t at : {std::uint64_t{0}, 2 * 4 * k_mib + 7, 3 * 4 * k_mib - 1, data.size() - 1}) {
    std::string bad = data;
    bad[at] = static_cast<char>(bad[at] ^ 0x01);
    const std::uint64_t chunk = at / (4 * k_mib);
    for (std::size_t lanes : {1u, 3u}) {
      ChunkCheck check(want, data.size(), lanes);
      EXPECT_FALSE(feed(check, bad, 1 << 20));
      const std::string problem = check.problem();
      EXPECT_NE(problem.find("chunk " + std::to_string(chunk) + " (bytes " + std::to_string(chunk * 4 * k_mib) + "-"),
                std::string::npos)
          << "byte " << at << ": " << problem;
      EXPECT_NE(problem.find("the signed manifest says sha256:" + want.sha256[chunk]), std::string::npos) << problem;
    }
  }
}

TEST(ChunkCheckTest, MissingOrExtraBytesAreProblems) {
  const std::string data = random_bytes(2 * 4 * k_mib + 10, 5);
  const FileChunks want = by_hand(data);
  ChunkCheck shorter(want, data.size(), 2);
  EXPECT_TRUE(feed(shorter, std::string_view(data).substr(0, 2 * 4 * k_mib), 1 << 20));  // the last chunk never comes
  EXPECT_NE(shorter.problem().find("2 of 3 chunks arrived"), std::string::npos) << shorter.problem();
  EXPECT_EQ(shorter.mismatch(), "");  // nothing that came was wrong: a write that stopped early is not a refusal
  ChunkCheck longer(want, data.size(), 2);
  EXPECT_FALSE(feed(longer, data + "x", 1 << 20));
  EXPECT_NE(longer.problem().find("runs past"), std::string::npos) << longer.problem();
  EXPECT_EQ(longer.mismatch(), longer.problem());
}

TEST(ChunkCheckTest, LanesOnAFanoutsThreadsCheckEveryChunk) {
  const std::string data = random_bytes(11 * 4 * k_mib + 4097, 6);
  const FileChunks want = by_hand(data);
  for (const bool flip : {false, true}) {
    std::string bytes = data;
    if (flip) bytes[9 * 4 * k_mib + 1] ^= 0x40;  // chunk 9
    ChunkCheck check(want, data.size(), 4);
    std::vector<BlockFanout::Step> steps;
    for (std::size_t i = 0; i < check.lanes(); ++i) steps.push_back(check.lane(i));
    BlockFanout fanout;
    fanout.begin(steps);
    for (std::size_t at = 0; at < bytes.size(); at += 999'999)
      fanout.put(as_bytes(std::string_view(bytes).substr(at, 999'999)));
    const auto ok = fanout.end();
    EXPECT_EQ(std::count(ok.begin(), ok.end(), false), flip ? 1 : 0);
    if (flip)
      EXPECT_NE(check.problem().find("chunk 9 "), std::string::npos) << check.problem();
    else
      EXPECT_EQ(check.problem(), "");
  }
}

TEST(ChunkCheckTest, LanesForStaysWithinItsBounds) {
  for (std::size_t chunks : {1u, 2u, 3u, 100u}) {
    const std::size_t lanes = ChunkCheck::lanes_for(chunks);
    EXPECT_GE(lanes, 1u);
    EXPECT_LE(lanes, std::min<std::size_t>(chunks, 4));
  }
}

}  // namespace
}  // namespace orc::cache
