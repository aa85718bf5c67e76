// BlockFanout: every step sees every byte of a file, in order, on threads of
// its own; a failing step stops alone; files may differ in their steps.
#include "orchestrator/cache/fanout.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace orc::cache {
namespace {

std::string pattern(std::size_t n, unsigned seed) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 31 + seed + i / 4093) % 251);
  return out;
}

BlockFanout::Step collect(std::string& into) {
  return [&into](std::span<const std::byte> bytes) {
    into.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return true;
  };
}

void put_in_pieces(BlockFanout& fanout, const std::string& bytes, std::size_t piece) {
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    const std::size_t n = std::min(piece, bytes.size() - at);
    fanout.put(std::as_bytes(std::span(bytes.data() + at, n)));
  }
}

TEST(BlockFanout, EveryStepSeesEveryByteInOrderAcrossManyBlocks) {
  // 41 MiB and a bit: more blocks than the ring has slots, in odd pieces.
  const std::string data = pattern((41 << 20) + 12345, 1);
  std::string a, b, c;
  BlockFanout fanout;
  fanout.begin({collect(a), collect(b), collect(c)});
  put_in_pieces(fanout, data, 700'001);
  EXPECT_EQ(fanout.end(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(a, data);
  EXPECT_EQ(b, data);
  EXPECT_EQ(c, data);
}

TEST(BlockFanout, AFailingStepStopsAloneAndIsReported) {
  const std::string data = pattern(20 << 20, 2);
  std::string kept;
  int calls = 0;
  BlockFanout fanout;
  fanout.begin({collect(kept), [&calls](std::span<const std::byte>) { return ++calls < 2; }});
  put_in_pieces(fanout, data, 1 << 20);
  EXPECT_EQ(fanout.end(), (std::vector<bool>{true, false}));
  EXPECT_EQ(calls, 2);  // the block it failed on, then no more
  EXPECT_EQ(kept, data);
}

TEST(BlockFanout, FilesOneAfterAnotherWithFewerOrMoreSteps) {
  BlockFanout fanout;
  const std::string first = pattern(9 << 20, 3), second = pattern(5 << 20, 4), third = pattern(3, 5);
  std::string f1a, f1b, f1c, f2, f3a, f3b;
  fanout.begin({collect(f1a), collect(f1b), collect(f1c)});
  put_in_pieces(fanout, first, 1 << 16);
  EXPECT_EQ(fanout.end().size(), 3u);
  fanout.begin({collect(f2)});  // two threads sit this file out
  put_in_pieces(fanout, second, 3 << 20);
  EXPECT_EQ(fanout.end(), std::vector<bool>{true});
  fanout.begin({collect(f3a), collect(f3b)});
  put_in_pieces(fanout, third, 1);
  EXPECT_EQ(fanout.end().size(), 2u);
  EXPECT_EQ(f1a, first);
  EXPECT_EQ(f1c, first);
  EXPECT_EQ(f2, second);
  EXPECT_EQ(f3a, third);
  EXPECT_EQ(f3b, third);
}

TEST(BlockFanout, AStepThatThrowsFailsAloneAndTheProcessGoesOn) {
  // 30 MiB is more blocks than the ring has slots: the producer cannot refill
  // the first slot before the throwing step has finished with it, so by the
  // time put() returns the failure is recorded (with fewer bytes than the
  // ring holds, failed() could be asked before that thread ran at all).
  static_assert((30u << 20) > BlockFanout::k_block * BlockFanout::k_slots);
  const std::string data = pattern(30 << 20, 6);
  std::string kept;
  BlockFanout fanout;
  fanout.begin({collect(kept), [](std::span<const std::byte>) -> bool { throw std::runtime_error("disk on fire"); }});
  put_in_pieces(fanout, data, 1 << 20);
  EXPECT_TRUE(fanout.failed());
  EXPECT_EQ(fanout.end(), (std::vector<bool>{true, false}));
  EXPECT_EQ(kept, data);
}

TEST(BlockFanout, AnEmptyFileEndsAtOnce) {
  BlockFanout fanout;
  std::string got = "untouched";
  fanout.begin({collect(got)});
  EXPECT_EQ(fanout.end(), std::vector<bool>{true});
  EXPECT_EQ(got, "untouched");
}

}  // namespace
}  // namespace orc::cache
