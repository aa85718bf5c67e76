// watch --once: feeds, then one block per recipe x tier with what the cycle
// did about it; --json is app::watch_json.
#include <algorithm>

#include "orchestrator/cli/render.hpp"

namespace orc::cli {

namespace {

std::string outcome_text(const app::WatchPair& p) {
  const app::WatchOutcome& o = p.outcome;
  switch (o.action) {
    case app::WatchAction::none:
    case app::WatchAction::would_rebuild:
      return {};
    case app::WatchAction::rebuilt: {
      std::string out = "    rebuilt: " + (o.set ? o.set->to_string() : std::string("?"));
      if (!o.detail.empty()) out += " (" + o.detail + ")";
      out += "\n";
      if (!o.image_made.empty()) out += "    image made again: " + o.image_made + "\n";
      if (!o.image_digest.empty()) out += "    image digest: " + o.image_digest + "\n";
      if (!o.probe.empty()) out += "    probed: " + o.probe + "\n";
      for (const auto& d : o.table_differences) out += "    tables differ: " + d + "\n";
      if (!o.smoke.empty()) out += "    smoke: " + o.smoke + "\n";
      if (!o.pushed.empty()) out += "    pushed as " + o.pushed + "\n";
      if (!o.push_error.empty()) out += "    push FAILED: " + o.push_error + "\n";
      return out;
    }
    case app::WatchAction::failed: {
      std::string out =
          "    rebuild FAILED (exit " + std::to_string(static_cast<int>(o.exit_code)) + "): " + o.detail + "\n";
      if (!o.image_made.empty()) out += "    image made again: " + o.image_made + "\n";
      if (!o.probe.empty()) out += "    probed: " + o.probe + "\n";
      return out;
    }
    case app::WatchAction::locked:
    case app::WatchAction::overtaken:
    case app::WatchAction::cancelled:
      return "    " + std::string(app::to_string(o.action)) + ": " + o.detail + "\n";
  }
  return {};
}

std::string watch_text(const app::WatchReport& report) {
  std::string out;
  if (report.followed) {
    out += report.followed->heading + "\n";
    for (const auto& line : report.followed->about) out += "  " + line + "\n";
  }
  for (const auto& f : report.feeds)
    out += f.ok ? "feed ok      " + f.name + " (" + std::to_string(f.offers) + " offers)\n"
                : "feed FAILED  " + f.error + "\n";
  for (const auto& p : report.pairs) {
    const std::string head = p.recipe + "/" + p.tier + " [" + p.policy + "]: ";
    if (!p.built)
      out += head + "no verified artifact set yet (orchestrate build " + p.tier + " -r " + p.recipe + ")\n";
    else if (!p.problem.empty())
      out += head + p.problem + "\n";
    else if (p.decision.stale)
      out += head + "STALE: " + p.decision.reason + "\n";
    else
      out += head + "up to date (CUDA " + p.toolkit + ", " + p.image + ")\n";
    for (const auto& d : p.decision.declined) out += "    declined: " + d + "\n";
    out += outcome_text(p);
  }
  if (report.all_feeds_failed() || (report.stop.stopped && report.pairs.empty())) return out;  // nothing was judged
  const auto count = [&](app::WatchAction a) {
    return std::to_string(
        std::ranges::count_if(report.pairs, [a](const app::WatchPair& p) { return p.outcome.action == a; }));
  };
  const auto stale = std::ranges::count_if(report.pairs, [](const app::WatchPair& p) { return p.decision.stale; });
  if (report.dry_run)
    return out + "dry run: " + std::to_string(stale) + " stale of " + std::to_string(report.pairs.size()) +
           " recipe x tier; nothing was built\n";
  if (stale == 0) return out + "nothing to do: every recipe x tier is up to date with what the feeds offer\n";
  out += "rebuilt " + count(app::WatchAction::rebuilt) + ", failed " + count(app::WatchAction::failed) +
         ", skipped (locked) " + count(app::WatchAction::locked) + ", cancelled " + count(app::WatchAction::cancelled) +
         " of " + std::to_string(stale) + " stale\n";
  if (report.collected_sets > 0) out += "keep: removed " + std::to_string(report.collected_sets) + " older sets\n";
  if (report.pruned_remote > 0)
    out += "keep: removed " + std::to_string(report.pruned_remote) + " older sets from the remote\n";
  if (report.notified) out += "notified\n";
  return out;
}

}  // namespace

void emit(Io& io, const app::WatchReport& report, Format format) {
  if (format == Format::json)
    io.out << app::watch_json(report) << "\n";
  else
    io.out << watch_text(report);
  if (report.stop.deadline)
    io.err << "orchestrate: error: " << report.stop.text()
           << ": the cycle was stopped (nothing half-done is stored; the next cycle starts over)\n";
  else if (report.stop.stopped)
    io.err << "orchestrate: watch " << report.stop.text()
           << ": the cycle was cut short (nothing half-done is stored; the next cycle starts over)\n";
  else if (report.all_feeds_failed())
    io.err << "orchestrate: error: every feed failed; nothing could be judged\n";
  if (!report.notify_error.empty()) io.err << "orchestrate: warning: " << report.notify_error << "\n";
  if (!report.prune_error.empty()) io.err << "orchestrate: error: " << report.prune_error << "\n";
  io.exit_code = report.exit_code();
}

}  // namespace orc::cli
