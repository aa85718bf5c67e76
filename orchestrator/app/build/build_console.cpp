// Console (build_job.hpp): build progress on stderr, plain or redrawn.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "orchestrator/app/build/build_job.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app::detail {

namespace {

// Columns of the terminal on stderr; 100 when it will not say.
std::size_t terminal_width() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) return size.ws_col;
  return 100;
}

// "1:05" for 65 seconds.
std::string clock_text(std::chrono::steady_clock::duration elapsed) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return text;
}

}  // namespace

Console::Console(std::ostream& stream, bool terminal)
    : m_stream(stream), m_terminal(terminal), m_start(std::chrono::steady_clock::now()) {}

void Console::line(const std::string& text) {
  std::scoped_lock lock(m_mutex);
  clear_status();
  m_stream << text << '\n';
  draw_status();
  m_stream << std::flush;
}

void Console::output(const std::string& build, const std::string& text) {
  std::scoped_lock lock(m_mutex);
  if (!m_terminal) {
    m_stream << '[' << build << "] " << text << '\n' << std::flush;
    return;
  }
  m_latest = build + ": " + text;
  draw_status();
  m_stream << std::flush;
}

void Console::started(const std::string& build) {
  std::scoped_lock lock(m_mutex);
  m_running.push_back(build);
  if (m_terminal) {
    m_latest = build + ": starting";
    draw_status();
    m_stream << std::flush;
  }
}

void Console::finished(const std::string& build, const std::string& outcome) {
  std::scoped_lock lock(m_mutex);
  std::erase(m_running, build);
  clear_status();
  m_stream << '[' << build << "] " << outcome << '\n';
  draw_status();
  m_stream << std::flush;
}

void Console::done() {
  std::scoped_lock lock(m_mutex);
  m_running.clear();
  clear_status();
  m_stream << std::flush;
}

void Console::clear_status() {
  if (m_terminal && m_status_shown) m_stream << "\r\x1b[2K";
  m_status_shown = false;
}

void Console::draw_status() {
  if (!m_terminal || m_running.empty()) return;
  std::string status = "[" + std::to_string(m_running.size()) + " building, " +
                       clock_text(std::chrono::steady_clock::now() - m_start) + "] " + m_latest;
  std::ranges::replace(status, '\t', ' ');
  const std::size_t width = terminal_width() - 1;
  if (status.size() > width) status = status.substr(0, width - 3) + "...";
  m_stream << "\r\x1b[2K" << status;
  m_status_shown = true;
}

}  // namespace orc::app::detail
