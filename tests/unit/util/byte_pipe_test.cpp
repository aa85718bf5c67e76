// The bounded pipe between a download thread and a scanning thread.
#include "orchestrator/util/byte_pipe.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace orc::util {
namespace {

std::string drain(BytePipe& pipe, std::string* error = nullptr) {
  std::string out;
  std::byte buffer[7];
  for (;;) {
    auto n = pipe.read(buffer);
    if (!n) {
      if (error) *error = n.error();
      return out;
    }
    if (*n == 0) return out;
    out.append(reinterpret_cast<const char*>(buffer), *n);
  }
}

TEST(BytePipe, EveryByteArrivesInOrderThroughASmallCapacity) {
  BytePipe pipe(16);
  std::string sent;
  for (int i = 0; i < 1000; ++i) sent += "chunk" + std::to_string(i) + ";";
  std::thread writer([&] {
    for (std::size_t at = 0; at < sent.size(); at += 13) ASSERT_TRUE(pipe.write(std::string_view(sent).substr(at, 13)));
    pipe.close();
  });
  EXPECT_EQ(drain(pipe), sent);
  writer.join();
}

TEST(BytePipe, TheWritersErrorReachesTheReaderAfterItsBytes) {
  BytePipe pipe;
  ASSERT_TRUE(pipe.write("abc"));
  pipe.close("the registry hung up");
  std::string error;
  EXPECT_EQ(drain(pipe, &error), "abc");
  EXPECT_EQ(error, "the registry hung up");
}

TEST(BytePipe, AnAbandonedPipeReleasesABlockedWriter) {
  BytePipe pipe(4);
  ASSERT_TRUE(pipe.write("full"));
  std::thread writer([&] { EXPECT_FALSE(pipe.write("more")); });
  pipe.abandon();
  writer.join();
  EXPECT_FALSE(pipe.write("x"));
}

TEST(PipeProducer, ItsFailureClosesThePipeAndAReaderThatStopsEarlyReleasesIt) {
  BytePipe pipe;
  PipeProducer failing(pipe, [&]() -> std::optional<std::string> {
    pipe.write("part");
    return "the engine went away";
  });
  std::string error;
  EXPECT_EQ(drain(pipe, &error), "part");
  EXPECT_EQ(error, "the engine went away");
  EXPECT_EQ(failing.join(), std::optional<std::string>("the engine went away"));

  // A reader that stops after one byte: join() abandons the pipe, so the
  // producer blocked on a full pipe ends.
  BytePipe small(4);
  bool refused = false;
  PipeProducer endless(small, [&]() -> std::optional<std::string> {
    while (small.write("more")) {
    }
    refused = true;
    return std::nullopt;
  });
  std::byte one[1];
  ASSERT_EQ(small.read(one).value_or(0), 1u);
  EXPECT_EQ(endless.join(), std::nullopt);
  EXPECT_TRUE(refused);
}

}  // namespace
}  // namespace orc::util
