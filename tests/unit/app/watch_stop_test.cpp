// A watch cycle's stop (issue 28): the caller's flag (what SIGTERM and
// SIGINT set, with their number) and the cycle's deadline both set the one
// flag the cycle's transfers and builds poll, and say which it was.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "orchestrator/app/watch/watch_detail.hpp"

namespace orc::app {
namespace {

// Waits (5 s at most, against a hang) for the stop's flag.
bool stopped_soon(const detail::CycleStop& stop) {
  for (int i = 0; i < 500 && !stop.stopped(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return stop.stopped();
}

TEST(WatchStop, ASignalOnTheCallersFlagStopsTheCycleAndIsNamed) {
  engine::CancelFlag outer;
  detail::CycleStop stop(&outer, std::chrono::hours(6));
  EXPECT_FALSE(stop.why().stopped);
  outer.request(SIGTERM);
  ASSERT_TRUE(stopped_soon(stop));
  const WatchStop why = stop.why();
  EXPECT_EQ(why.signal, SIGTERM);
  EXPECT_FALSE(why.deadline);
  EXPECT_EQ(why.text(), "stopped by SIGTERM");
  EXPECT_EQ(stop.flag().signal(), SIGTERM);
  EXPECT_EQ((WatchReport{.stop = why}).exit_code(), static_cast<util::ExitCode>(143));
  EXPECT_EQ((WatchStop{.stopped = true, .signal = SIGINT}).text(), "stopped by SIGINT");
}

TEST(WatchStop, TheDeadlineStopsTheCycleAndIsAnOutsideFailure) {
  detail::CycleStop stop(nullptr, std::chrono::seconds(1));
  ASSERT_TRUE(stopped_soon(stop));
  const WatchStop why = stop.why();
  EXPECT_TRUE(why.deadline);
  EXPECT_EQ(why.signal, 0);
  EXPECT_EQ(why.text(), "the cycle's deadline of 1s passed (watch --deadline D sets it)");
  EXPECT_EQ((WatchReport{.stop = why}).exit_code(), util::ExitCode::outside_failure);
}

}  // namespace
}  // namespace orc::app
