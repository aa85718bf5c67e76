#pragma once
// Progress of push, pull and fetch on stderr. On a terminal a download is one
// line redrawn with a bar (a byte count the download keeps is polled); an upload is a line when it starts and
// one when it ends. Off a terminal (logs, CI) every transfer is a plain line
// when it starts and when it ends, nothing redrawn.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace orc::app {

enum class Terminal { no, yes };

class TransferProgress {
 public:
  // `out` null: silent.
  TransferProgress(std::ostream* out, Terminal terminal) : m_out(out), m_terminal(terminal) {}

  // Where lines go; a stream that drops everything when silent.
  std::ostream& stream() const;
  // One line of text (a step, a warning).
  void line(std::string_view text) const;
  // Runs `work` (a blob download of `total` bytes, `done()` of them so far:
  // called from another thread) and shows it; `work` returns whether it
  // succeeded (a failure is the caller's to say).
  void download(std::string_view label, std::uint64_t total, const std::function<std::uint64_t()>& done,
                const std::function<bool()>& work) const;
  // Runs `work` (a blob upload of `total` bytes) and shows it.
  void upload(std::string_view label, std::uint64_t total, const std::function<bool()>& work) const;

 private:
  void finished(std::string_view verb, std::string_view label, std::uint64_t total, double seconds) const;
  std::ostream* m_out;
  Terminal m_terminal;
};

// "[##########..........]  512.0 MiB / 1.0 GiB   50%": the redrawn part of a
// download line (no speed: that needs a clock).
std::string progress_bar(std::uint64_t done, std::uint64_t total, std::size_t width = 24);

}  // namespace orc::app
