// debootstrap's and apt's output, as they print it into a pipe, turned into
// progress lines (a log, CI) or one live line (a terminal).
#include "orchestrator/imaging/tool_progress.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace orc::imaging {
namespace {

using Clock = std::chrono::steady_clock;

// A clock that stands still unless a test moves it.
struct FakeClock {
  Clock::time_point at{};
  std::function<Clock::time_point()> fn() {
    return [this] { return at; };
  }
};

std::string packages(const std::string& format, int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) {
    std::string line = format;
    for (auto at = line.find('%'); at != std::string::npos; at = line.find('%'))
      line.replace(at, 1, "pkg" + std::to_string(i));
    out += line + "\n";
  }
  return out;
}

// debootstrap --variant=minbase, as it writes into a pipe (40 packages here,
// and one configured more than fetched, as bookworm's and trixie's do).
std::string debootstrap_output() {
  return "I: Retrieving InRelease \n"
         "I: Checking Release signature\n"
         "I: Valid Release signature (key id 4CB50190207B4758A3F73A796ED0E7B82643E131)\n"
         "I: Retrieving Packages \n"
         "I: Validating Packages \n"
         "I: Resolving dependencies of required packages...\n"
         "I: Checking component main on http://mirror.example/debian...\n" +
         packages("I: Retrieving % 1.0-1\nI: Validating % 1.0-1", 40) +
         "I: Chosen extractor for .deb packages: dpkg-deb\n" + packages("I: Extracting %...", 20) +
         "I: Installing core packages...\nI: Unpacking required packages...\n" + packages("I: Unpacking %...", 40) +
         "I: Configuring required packages...\n" + packages("I: Configuring %...", 41) +
         "I: Base system installed successfully.\n";
}

// apt-get update and install -q (20 packages, and one fetch more, as
// trixie's CUDA 12.4 install has), with dpkg going back and forth between
// unpacking and setting up.
std::string apt_output() {
  return "Get:1 http://mirror.example/debian bookworm InRelease [151 kB]\n"
         "Get:2 http://mirror.example/debian bookworm/main amd64 Packages [8787 kB]\n"
         "Fetched 8938 kB in 2s (4469 kB/s)\n"
         "Reading package lists...\n"
         "Building dependency tree...\n"
         "The following NEW packages will be installed:\n"
         "  pkg1 pkg2 pkg3\n"
         "0 upgraded, 20 newly installed, 0 to remove and 0 not upgraded.\n"
         "Need to get 61.2 MB of archives.\n"
         "After this operation, 230 MB of additional disk space will be used.\n" +
         packages("Get:% http://mirror.example/debian bookworm/main amd64 % amd64 1.0-1 [100 kB]", 21) +
         "Fetched 61.2 MB in 5s (12.2 MB/s)\n"
         "debconf: delaying package configuration, since apt-utils is not installed\n" +
         packages(
             "Selecting previously unselected package %.\nPreparing to unpack .../%.deb ...\nUnpacking % (1.0-1) ...",
             10) +
         packages("Setting up % (1.0-1) ...", 2) +
         packages("Selecting previously unselected package %.\nUnpacking % (1.0-1) ...", 10) +
         packages("Setting up % (1.0-1) ...", 18) + "Processing triggers for libc-bin (2.36-9) ...\n";
}

TEST(ToolProgress, DebootstrapInLines) {
  std::ostringstream out;
  FakeClock clock;
  ToolProgress progress(out, {.style = ProgressStyle::lines, .now = clock.fn()});
  progress.feed(debootstrap_output());
  progress.finish();
  EXPECT_EQ(out.str(),
            "images: debootstrap: fetching index files: 1 [0:00]\n"
            "images: debootstrap: fetching packages: 1 [0:00]\n"
            "images: debootstrap: fetching packages: 25 [0:00]\n"
            "images: debootstrap: extracting packages: 1 of 40 [0:00]\n"
            "images: debootstrap: extracting packages: 4 of 40 [0:00]\n"
            "images: debootstrap: extracting packages: 8 of 40 [0:00]\n"
            "images: debootstrap: extracting packages: 12 of 40 [0:00]\n"
            "images: debootstrap: extracting packages: 16 of 40 [0:00]\n"
            "images: debootstrap: extracting packages: 20 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 1 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 4 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 8 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 12 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 16 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 20 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 24 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 28 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 32 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 36 of 40 [0:00]\n"
            "images: debootstrap: unpacking packages: 40 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 1 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 4 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 8 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 12 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 16 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 20 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 24 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 28 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 32 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 36 of 40 [0:00]\n"
            "images: debootstrap: configuring packages: 40 of 40 [0:00]\n");
}

TEST(ToolProgress, AptInLinesSaysEachStageOnceAndEachTenth) {
  std::ostringstream out;
  FakeClock clock;
  ToolProgress progress(out, {.style = ProgressStyle::lines, .now = clock.fn()});
  // In pieces that cut lines, as a pipe delivers them.
  const std::string text = apt_output();
  for (std::size_t at = 0; at < text.size(); at += 7) progress.feed(std::string_view(text).substr(at, 7));
  EXPECT_EQ(out.str(),
            "images: apt: fetching index files: 1 [0:00]\n"
            "images: apt: 20 packages to install [0:00]\n"
            "images: apt: 61.2 MB to fetch [0:00]\n"
            "images: apt: fetching packages: 1 of 20 [0:00]\n"
            "images: apt: fetching packages: 2 of 20 [0:00]\n"
            "images: apt: fetching packages: 4 of 20 [0:00]\n"
            "images: apt: fetching packages: 6 of 20 [0:00]\n"
            "images: apt: fetching packages: 8 of 20 [0:00]\n"
            "images: apt: fetching packages: 10 of 20 [0:00]\n"
            "images: apt: fetching packages: 12 of 20 [0:00]\n"
            "images: apt: fetching packages: 14 of 20 [0:00]\n"
            "images: apt: fetching packages: 16 of 20 [0:00]\n"
            "images: apt: fetching packages: 18 of 20 [0:00]\n"
            "images: apt: fetching packages: 20 of 20 [0:00]\n"
            "images: apt: unpacking packages: 1 of 20 [0:00]\n"
            "images: apt: unpacking packages: 2 of 20 [0:00]\n"
            "images: apt: unpacking packages: 4 of 20 [0:00]\n"
            "images: apt: unpacking packages: 6 of 20 [0:00]\n"
            "images: apt: unpacking packages: 8 of 20 [0:00]\n"
            "images: apt: unpacking packages: 10 of 20 [0:00]\n"
            "images: apt: configuring packages: 1 of 20 [0:00]\n"
            "images: apt: configuring packages: 2 of 20 [0:00]\n"
            "images: apt: unpacking packages: 12 of 20 [0:00]\n"
            "images: apt: unpacking packages: 14 of 20 [0:00]\n"
            "images: apt: unpacking packages: 16 of 20 [0:00]\n"
            "images: apt: unpacking packages: 18 of 20 [0:00]\n"
            "images: apt: unpacking packages: 20 of 20 [0:00]\n"
            "images: apt: configuring packages: 4 of 20 [0:00]\n"
            "images: apt: configuring packages: 6 of 20 [0:00]\n"
            "images: apt: configuring packages: 8 of 20 [0:00]\n"
            "images: apt: configuring packages: 10 of 20 [0:00]\n"
            "images: apt: configuring packages: 12 of 20 [0:00]\n"
            "images: apt: configuring packages: 14 of 20 [0:00]\n"
            "images: apt: configuring packages: 16 of 20 [0:00]\n"
            "images: apt: configuring packages: 18 of 20 [0:00]\n"
            "images: apt: configuring packages: 20 of 20 [0:00]\n");
}

TEST(ToolProgress, LinesShowTheTimeSinceTheStepStarted) {
  std::ostringstream out;
  FakeClock clock;
  ToolProgress progress(out, {.style = ProgressStyle::lines, .now = clock.fn()});
  clock.at += std::chrono::seconds(65);
  progress.feed("0 upgraded, 3 newly installed, 0 to remove and 0 not upgraded.\n");
  EXPECT_EQ(out.str(), "images: apt: 3 packages to install [1:05]\n");
}

TEST(ToolProgress, LiveRedrawsOneLineCutToTheWidthAndClearsIt) {
  std::ostringstream out;
  FakeClock clock;
  ToolProgress progress(out, {.style = ProgressStyle::live, .width = 60, .now = clock.fn()});
  progress.feed("0 upgraded, 2 newly installed, 0 to remove and 0 not upgraded.\n");
  progress.feed("Unpacking libstdc++-12-dev-with-a-long-name (12.2.0-14) ...\nUnpacking gcc (4:12.2.0-3) ...\n");
  progress.finish();
  const std::string first = "images: apt: unpacking packages: 1 of 2 [0:00] libstdc++-12-dev-with-a-long-name";
  EXPECT_EQ(out.str(),
            "images: apt: 2 packages to install [0:00]\n"
            "\r\x1b[2K" +
                first.substr(0, 59) +
                "\r\x1b[2Kimages: apt: unpacking packages: 2 of 2 [0:00] gcc"
                "\r\x1b[2K");
}

TEST(ToolProgress, OtherOutputIsTheLogsAlone) {
  std::ostringstream out;
  ToolProgress progress(out, {});
  progress.feed(
      "W: Cannot check Release signature\nE: Unable to locate package nvidia-cuda-toolkitt\n"
      "setup: /usr/bin/gcc-13 is missing (add its package to the image's list)\npartial line");
  progress.finish();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace orc::imaging
