#include "orchestrator/app/transfer/transfer_progress.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <ostream>
#include <thread>

#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using Clock = std::chrono::steady_clock;
using util::human_size;

// Often enough to look live, rarely enough to cost nothing next to the copy.
constexpr auto k_redraw = std::chrono::milliseconds(150);

std::string rate(std::uint64_t bytes, double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f MB/s", seconds > 0 ? static_cast<double>(bytes) / 1e6 / seconds : 0.0);
  return text;
}

}  // namespace

std::string progress_bar(std::uint64_t done, std::uint64_t total, std::size_t width) {
  if (done > total) done = total;
  const std::size_t filled = total == 0 ? width : static_cast<std::size_t>(done * width / total);
  const unsigned percent = total == 0 ? 100 : static_cast<unsigned>(done * 100 / total);
  char pct[8];
  std::snprintf(pct, sizeof pct, "%3u%%", percent);
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]  " + human_size(done) + " / " +
         human_size(total) + "  " + pct;
}

std::ostream& TransferProgress::stream() const {
  static std::ostream silent(nullptr);
  return m_out ? *m_out : silent;
}

void TransferProgress::line(std::string_view text) const {
  if (m_out) *m_out << text << '\n' << std::flush;
}

void TransferProgress::finished(std::string_view verb, std::string_view label, std::uint64_t total,
                                double seconds) const {
  char took[32];
  std::snprintf(took, sizeof took, "%.2f s", seconds);
  line(std::string(verb) + " " + std::string(label) + " (" + human_size(total) + ") in " + took + ", " +
       rate(total, seconds));
}

void TransferProgress::download(std::string_view label, std::uint64_t total,
                                const std::function<std::uint64_t()>& done_bytes,
                                const std::function<bool()>& work) const {
  const auto start = Clock::now();
  if (!m_out || m_terminal == Terminal::no) {
    line("pulling " + std::string(label) + " (" + human_size(total) + ")");
    if (work()) finished("pulled", label, total, std::chrono::duration<double>(Clock::now() - start).count());
    return;
  }
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  std::thread painter([&] {
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, k_redraw, [&] { return done; })) {
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      const std::uint64_t have = done_bytes();
      *m_out << "\r\033[K" << label << "  " << progress_bar(have, total) << "  " << rate(have, seconds) << std::flush;
    }
  });
  const bool ok = work();
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  wake.notify_one();
  painter.join();
  *m_out << "\r\033[K";
  if (ok) finished("pulled", label, total, std::chrono::duration<double>(Clock::now() - start).count());
}

void TransferProgress::upload(std::string_view label, std::uint64_t total, const std::function<bool()>& work) const {
  const auto start = Clock::now();
  line("pushing " + std::string(label) + " (" + human_size(total) + ")");
  if (work()) finished("pushed", label, total, std::chrono::duration<double>(Clock::now() - start).count());
}

}  // namespace orc::app
