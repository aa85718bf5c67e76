// `orchestrate watch --interval D`: cycles until SIGTERM/SIGINT (the
// request's cancel flag, set by the caller's handler). Each cycle prints one
// status line; a cycle in which a feed failed is followed by a shorter wait
// (1 minute, doubling while the failures go on, never longer than the
// interval), so a registry that was down for a moment is read again soon
// without being hammered. A signal during a build cancels it (nothing half
// stored); a signal while waiting ends the wait at once.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <ostream>
#include <thread>

#include "orchestrator/app/watch/watch_detail.hpp"
#include "orchestrator/cache/files.hpp"

namespace orc::app {

namespace {

using Clock = std::chrono::steady_clock;
using detail::duration_text;

std::string utc_now() { return cache::utc_rfc3339(std::time(nullptr)); }

// "2026-12-02T11:40:00Z cycle 3: feeds 2/2 ok, 1 stale, 1 rebuilt, 0 failed, 0 locked; next in 6h".
std::string status_line(std::size_t cycle, const WatchReport& r, const std::string& next) {
  std::size_t ok = 0, stale = 0, rebuilt = 0, failed = 0, locked = 0;
  for (const auto& f : r.feeds) ok += f.ok ? 1 : 0;
  for (const auto& p : r.pairs) {
    stale += p.decision.stale ? 1 : 0;
    rebuilt += p.outcome.action == WatchAction::rebuilt ? 1 : 0;
    failed += p.outcome.action == WatchAction::failed ? 1 : 0;
    locked += p.outcome.action == WatchAction::locked ? 1 : 0;
  }
  std::string line = utc_now() + " cycle " + std::to_string(cycle) + ": feeds " + std::to_string(ok) + "/" +
                     std::to_string(r.feeds.size()) + " ok, " + std::to_string(stale) + " stale, " +
                     std::to_string(rebuilt) + " rebuilt, " + std::to_string(failed) + " failed, " +
                     std::to_string(locked) + " locked";
  if (!r.notify_error.empty()) line += "; notify: " + r.notify_error;
  for (const auto& f : r.feeds)
    if (!f.ok) line += "; feed failed: " + f.error;
  if (r.stop.deadline) line += "; " + r.stop.text();
  return line + "; " + next;
}

// Waits `span` or until the flag is set; true when it was set.
bool wait_or_stop(std::chrono::seconds span, const engine::CancelFlag* cancel) {
  const auto until = Clock::now() + span;
  while (Clock::now() < until) {
    if (cancel && cancel->requested()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return cancel && cancel->requested();
}

}  // namespace

util::ExitCode watch_service(const WatchRequest& request, const WatchServiceOptions& options, std::ostream& status) {
  util::ExitCode last = util::ExitCode::ok;
  const auto signalled = [&] { return request.cancel && request.cancel->requested() ? request.cancel->signal() : 0; };
  int failing = 0;  // cycles in a row in which some feed failed
  for (std::size_t cycle = 1;; ++cycle) {
    WatchReport report;
    try {
      report = watch_once(request);
      last = report.exit_code();
    } catch (const util::Failure& failure) {
      // A configuration that is wrong from the start is the user's to fix
      // now; one broken while the service runs is said and waited out (the
      // next cycle reads it again).
      if (cycle == 1 && failure.code() == util::ExitCode::bad_input) throw;
      last = failure.code();
      status << utc_now() << " cycle " << cycle << ": "
             << (failure.diagnostics().empty() ? std::string("failed") : failure.diagnostics().front().render())
             << std::endl;
    }
    const bool feed_failed = std::ranges::any_of(report.feeds, [](const WatchFeedStatus& f) { return !f.ok; });
    failing = feed_failed ? failing + 1 : 0;
    std::chrono::seconds wait = options.interval;
    if (failing > 0) wait = std::min(options.interval, std::chrono::seconds(60LL << std::min(failing - 1, 16)));
    const bool stopping =
        (request.cancel && request.cancel->requested()) || (options.max_cycles != 0 && cycle >= options.max_cycles);
    if (!report.feeds.empty() || report.pairs.size() > 0)
      status << status_line(cycle, report,
                            stopping ? std::string("stopping")
                                     : (failing > 0 ? "a feed failed, retrying in " : "next in ") + duration_text(wait))
             << std::endl;
    if (stopping || wait_or_stop(wait, request.cancel)) break;
  }
  const WatchStop stop{.stopped = true, .signal = signalled()};
  status << utc_now() << " watcher " << (stop.signal != 0 ? stop.text() : "stopped") << std::endl;
  // Stopped by a signal: the shell's 128 + N, as a cycle cut short says too.
  return stop.signal != 0 ? static_cast<util::ExitCode>(128 + stop.signal) : last;
}

}  // namespace orc::app
