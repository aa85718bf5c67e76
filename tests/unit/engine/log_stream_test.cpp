#include "orchestrator/engine/log_stream.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/engine/test_support.hpp"

namespace orc::engine {
namespace {

using testing::CollectingLog;

// One multiplexed frame: stream byte, three zero bytes, big-endian length.
std::string frame(unsigned char stream, std::string_view payload) {
  std::string f(8, '\0');
  f[0] = static_cast<char>(stream);
  const auto n = static_cast<std::uint32_t>(payload.size());
  f[4] = static_cast<char>(n >> 24);
  f[5] = static_cast<char>(n >> 16);
  f[6] = static_cast<char>(n >> 8);
  f[7] = static_cast<char>(n);
  return f + std::string(payload);
}

TEST(LogDemuxer, SplitsStdoutAndStderr) {
  CollectingLog log;
  LogDemuxer demuxer(log, LogDemuxer::Mode::multiplexed);
  ASSERT_TRUE(demuxer.feed(frame(1, "to-stdout\n") + frame(2, "to-stderr\n") + frame(1, "again\n")));
  ASSERT_TRUE(demuxer.finish());
  EXPECT_EQ(log.out, "to-stdout\nagain\n");
  EXPECT_EQ(log.err, "to-stderr\n");
  EXPECT_EQ(demuxer.frames(), 3u);
}

// libcurl hands over whatever the socket read returned, so a header or a
// payload can be cut at any byte; every cut must give the same result.
// A JSON object where a header belongs is the engine's error (podman writes
// one after its 200 when it fails); it is kept, bounded, and is not output.
TEST(LogDemuxer, TheEnginesErrorInPlaceOfAFrameIsKeptNotPrinted) {
  CollectingLog log;
  LogDemuxer demuxer(log, LogDemuxer::Mode::multiplexed);
  ASSERT_TRUE(demuxer.feed(frame(1, "out\n") + R"({"message":"gone"})"));
  ASSERT_TRUE(demuxer.feed(std::string(2 * LogDemuxer::k_engine_error_max, ' ')));
  EXPECT_FALSE(demuxer.finish());
  EXPECT_EQ(log.out, "out\n");
  EXPECT_TRUE(demuxer.engine_error().starts_with(R"({"message":"gone"})"));
  EXPECT_EQ(demuxer.engine_error().size(), LogDemuxer::k_engine_error_max);
}

TEST(LogDemuxer, FramesSplitAtEveryByteGiveTheSameOutput) {
  const std::string stream = frame(1, "hello ") + frame(2, "oops\n") + frame(1, std::string(300, 'x')) + frame(1, "");
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    for (std::size_t cut2 = cut; cut2 <= stream.size(); cut2 += 7) {
      CollectingLog log;
      LogDemuxer demuxer(log, LogDemuxer::Mode::multiplexed);
      ASSERT_TRUE(demuxer.feed(std::string_view(stream).substr(0, cut)));
      ASSERT_TRUE(demuxer.feed(std::string_view(stream).substr(cut, cut2 - cut)));
      ASSERT_TRUE(demuxer.feed(std::string_view(stream).substr(cut2)));
      ASSERT_TRUE(demuxer.finish()) << cut;
      EXPECT_EQ(log.out, "hello " + std::string(300, 'x')) << cut << "," << cut2;
      EXPECT_EQ(log.err, "oops\n");
    }
  }
}

TEST(LogDemuxer, OneByteAtATime) {
  const std::string stream = frame(2, "e1") + frame(1, "o1") + frame(2, "e2");
  CollectingLog log;
  LogDemuxer demuxer(log, LogDemuxer::Mode::multiplexed);
  for (char c : stream) ASSERT_TRUE(demuxer.feed(std::string_view(&c, 1)));
  ASSERT_TRUE(demuxer.finish());
  EXPECT_EQ(log.both, "e1o1e2");
  EXPECT_EQ(log.err, "e1e2");
}

TEST(LogDemuxer, LargeLengthUsesAllFourBytes) {
  const std::string payload(70'000, 'y');  // needs the third length byte
  CollectingLog log;
  LogDemuxer demuxer(log, LogDemuxer::Mode::multiplexed);
  ASSERT_TRUE(demuxer.feed(frame(1, payload)));
  ASSERT_TRUE(demuxer.finish());
  EXPECT_EQ(log.out.size(), payload.size());
}

TEST(LogDemuxer, SystemErrorStreamGoesToStderr) {
  CollectingLog log;
  LogDemuxer demuxer(log, LogDemuxer::Mode::multiplexed);
  ASSERT_TRUE(demuxer.feed(frame(3, "engine says no")));
  EXPECT_EQ(log.err, "engine says no");
}

TEST(LogDemuxer, RejectsABadHeader) {
  CollectingLog log;
  LogDemuxer demuxer(log, LogDemuxer::Mode::multiplexed);
  auto result = demuxer.feed(std::string("\x01\x00\x07\x00\x00\x00\x00\x01z", 9));
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().find("bad frame header"), std::string::npos);
  LogDemuxer other(log, LogDemuxer::Mode::multiplexed);
  EXPECT_FALSE(other.feed(std::string("\x09\x00\x00\x00\x00\x00\x00\x01z", 9)));
}

TEST(LogDemuxer, StreamEndingInsideAFrameIsAnError) {
  CollectingLog log;
  LogDemuxer demuxer(log, LogDemuxer::Mode::multiplexed);
  const std::string f = frame(1, "truncated");
  ASSERT_TRUE(demuxer.feed(f.substr(0, f.size() - 3)));
  EXPECT_FALSE(demuxer.finish());
  LogDemuxer header_only(log, LogDemuxer::Mode::multiplexed);
  ASSERT_TRUE(header_only.feed(f.substr(0, 5)));
  EXPECT_FALSE(header_only.finish());
}

// Tty=true: no framing, everything is stdout, bytes exactly as sent.
TEST(LogDemuxer, RawModePassesBytesThrough) {
  CollectingLog log;
  LogDemuxer demuxer(log, LogDemuxer::Mode::raw);
  ASSERT_TRUE(demuxer.feed("line one\r\n"));
  ASSERT_TRUE(demuxer.feed(std::string("\x01\x00\x00\x00", 4)));
  ASSERT_TRUE(demuxer.finish());
  EXPECT_EQ(log.out, std::string("line one\r\n\x01\x00\x00\x00", 14));
  EXPECT_EQ(log.err, "");
}

TEST(LogDemuxer, DetectTellsFramesFromRawText) {
  {
    CollectingLog log;
    LogDemuxer demuxer(log, LogDemuxer::Mode::detect);
    const std::string f = frame(2, "framed");
    ASSERT_TRUE(demuxer.feed(f.substr(0, 3)));
    ASSERT_TRUE(demuxer.feed(f.substr(3)));
    ASSERT_TRUE(demuxer.finish());
    EXPECT_EQ(log.err, "framed");
  }
  {
    CollectingLog log;
    LogDemuxer demuxer(log, LogDemuxer::Mode::detect);
    ASSERT_TRUE(demuxer.feed("plain tty output\r\n"));
    ASSERT_TRUE(demuxer.finish());
    EXPECT_EQ(log.out, "plain tty output\r\n");
  }
  {
    CollectingLog log;
    LogDemuxer demuxer(log, LogDemuxer::Mode::detect);
    ASSERT_TRUE(demuxer.feed("ok\n"));  // shorter than a header
    ASSERT_TRUE(demuxer.finish());
    EXPECT_EQ(log.out, "ok\n");
  }
}

}  // namespace
}  // namespace orc::engine
