#pragma once
// Progress of debootstrap and apt, read from their output: which stage they
// are in (fetching, unpacking, configuring) and how many packages of how
// many. Their output goes to a log; this turns it into what a user watching
// `images build` sees, so minutes of apt are never silent.
//
// The lines it reads (debootstrap's functions and apt-get's -q output):
//   I: Retrieving libc6 2.36-9      one package fetched (two words: a package)
//   I: Extracting libc6...          I: Unpacking libc6...   I: Configuring libc6...
//   Get:3 http://... trixie InRelease [140 kB]            the package index
//   0 upgraded, 231 newly installed, 0 to remove and 0 not upgraded.
//   Need to get 1,234 MB of archives.
//   Get:17 http://... trixie/main amd64 gcc-13 amd64 13.3.0-1 [470 kB]
//   Unpacking gcc-13 (13.3.0-1) ...  Setting up gcc-13 (13.3.0-1) ...
// Anything else is the log's alone.
#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>

namespace orc::imaging {

// lines: a line when a stage starts and at each tenth of its packages (each
// 25th when the total is unknown), for logs and pipes; live: one line
// redrawn in place, for a terminal.
enum class ProgressStyle { lines, live };

struct ProgressOptions {
  ProgressStyle style = ProgressStyle::lines;
  std::size_t width = 100;  // the live line is cut to this
  // The clock of the elapsed time each line shows; steady_clock when empty.
  std::function<std::chrono::steady_clock::time_point()> now;
};

class ToolProgress {
 public:
  ToolProgress(std::ostream& out, ProgressOptions options);

  // Output as it arrives; each complete line is read.
  void feed(std::string_view bytes);
  // The live line cleared (nothing in lines mode).
  void finish();

 private:
  void on_line(std::string_view line);
  void on_debootstrap(std::string_view text);
  void on_apt(std::string_view line);
  // One more `item` of what `tool` is `verb`-ing (`noun`); `total` 0 when unknown.
  void step(std::string_view tool, std::string_view verb, std::string_view noun, std::size_t total,
            std::string_view item);
  void say(std::string_view tool, const std::string& text);
  std::string elapsed() const;

  std::ostream& m_out;
  ProgressOptions m_options;
  std::chrono::steady_clock::time_point m_start;
  std::string m_partial;  // a line not ended yet
  // Each stage's count, and the tenth of its total (or the step of an
  // unknown one) last shown: apt and dpkg go back and forth between
  // unpacking and configuring, and a stage's line is not said again for it.
  struct Count {
    std::size_t done = 0;
    std::size_t shown = 0;
  };
  std::map<std::string, Count, std::less<>> m_stages;  // by "apt: unpacking packages"
  bool m_live_shown = false;
  // debootstrap: the packages it fetched, the total of what it unpacks and configures.
  std::size_t m_fetched = 0;
  // apt: the packages the running apt-get installs (0 until it says).
  std::size_t m_apt_total = 0;
};

}  // namespace orc::imaging
