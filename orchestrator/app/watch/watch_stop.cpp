// How a watch cycle stops early (watch_detail.hpp's CycleStop): a signal
// reaching the caller's flag, or the cycle's deadline, both turned into the
// one flag every transfer and build of the cycle polls.
#include <condition_variable>
#include <csignal>
#include <mutex>

#include "orchestrator/app/watch/watch_detail.hpp"

namespace orc::app {

namespace {

std::string signal_name(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "signal " + std::to_string(signal);
  }
}

}  // namespace

std::string WatchStop::text() const {
  if (deadline)
    return "the cycle's deadline of " + detail::duration_text(limit) + " passed (watch --deadline D sets it)";
  if (signal != 0) return "stopped by " + signal_name(signal);
  return "stopped";
}

namespace detail {

CycleStop::CycleStop(const engine::CancelFlag* outer, std::chrono::seconds deadline)
    : m_deadline(deadline), m_watch([this, outer](std::stop_token token) {
        const auto until = std::chrono::steady_clock::now() + m_deadline;
        std::mutex mutex;
        std::condition_variable_any wake;
        std::unique_lock lock(mutex);
        while (!token.stop_requested()) {
          if (outer && outer->requested()) {
            m_flag.request(outer->signal());
            return;
          }
          if (std::chrono::steady_clock::now() >= until) {
            m_deadline_passed.store(true);
            m_flag.request();
            return;
          }
          // Wakes at once when the cycle ends and the thread is joined.
          wake.wait_for(lock, token, std::chrono::milliseconds(50), [] { return false; });
        }
      }) {}

WatchStop CycleStop::why() const {
  return WatchStop{.stopped = m_flag.requested(),
                   .signal = m_flag.signal(),
                   .deadline = m_deadline_passed.load(),
                   .limit = m_deadline};
}

std::string duration_text(std::chrono::seconds s) {
  const auto n = s.count();
  if (n % 3600 == 0) return std::to_string(n / 3600) + "h";
  if (n % 60 == 0) return std::to_string(n / 60) + "m";
  return std::to_string(n) + "s";
}

}  // namespace detail
}  // namespace orc::app
