// Build progress: every line with the build's name when stderr is a log,
// one status line redrawn in place when it is a terminal.
#include <gtest/gtest.h>

#include <sstream>

#include "orchestrator/app/build/build_job.hpp"

namespace orc::app::detail {
namespace {

TEST(BuildConsole, PlainModePrintsEveryLineWithTheBuildsName) {
  std::ostringstream out;
  Console console(out, false);
  console.line("orchestrate: building on the HOST");
  console.started("saxpy/tier-new");
  console.output("saxpy/tier-new", "[ 50%] Building CUDA object");
  console.output("saxpy/tier-old", "-- Configuring done");
  console.finished("saxpy/tier-new", "built in 3.2 s");
  console.done();
  EXPECT_EQ(out.str(),
            "orchestrate: building on the HOST\n"
            "[saxpy/tier-new] [ 50%] Building CUDA object\n"
            "[saxpy/tier-old] -- Configuring done\n"
            "[saxpy/tier-new] built in 3.2 s\n");
  EXPECT_EQ(out.str().find('\r'), std::string::npos) << "no terminal control in a log";
}

TEST(BuildConsole, TerminalModeRedrawsOneStatusLineAndKeepsOutcomes) {
  std::ostringstream out;
  Console console(out, true);
  console.started("saxpy/tier-new");
  console.output("saxpy/tier-new", "[ 50%] Building CUDA object");
  console.line("orchestrate: a decision");
  console.finished("saxpy/tier-new", "built in 3.2 s");
  console.done();
  const std::string text = out.str();
  // The output line shows only in the status, after a clear of the line.
  EXPECT_NE(text.find("\r\x1b[2K[1 building, 0:00] saxpy/tier-new: [ 50%] Building CUDA object"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("[saxpy/tier-new] [ 50%]"), std::string::npos) << "build output scrolled: " << text;
  // A permanent line clears the status, prints, and redraws it.
  EXPECT_NE(text.find("\r\x1b[2Korchestrate: a decision\n\r\x1b[2K[1 building"), std::string::npos) << text;
  EXPECT_NE(text.find("[saxpy/tier-new] built in 3.2 s\n"), std::string::npos) << text;
  // Nothing runs any more: the status is gone and not redrawn.
  EXPECT_TRUE(text.ends_with("built in 3.2 s\n")) << text;
}

}  // namespace
}  // namespace orc::app::detail
