// watch --once --dry-run: feeds, then one block per recipe x tier.
#include <nlohmann/json.hpp>

#include "orchestrator/cli/render.hpp"

namespace orc::cli {

namespace {

using Json = nlohmann::ordered_json;

Json offer_json(const watch::Offer& o) {
  return Json{{"toolkit", o.toolkit.str()}, {"image", o.image}, {"digest", o.digest}, {"feed", o.feed}};
}

std::string watch_text(const app::WatchReport& report) {
  std::string out;
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
  }
  if (report.exit_code() != util::ExitCode::ok) return out;  // nothing was judged
  const auto stale = std::ranges::count_if(report.pairs, [](const app::WatchPair& p) { return p.decision.stale; });
  out += "dry run: " + std::to_string(stale) + " stale of " + std::to_string(report.pairs.size()) +
         " recipe x tier; nothing was built\n";
  return out;
}

Json watch_json(const app::WatchReport& report) {
  Json feeds = Json::array();
  for (const auto& f : report.feeds)
    feeds.push_back(
        {{"name", f.name}, {"ok", f.ok}, {"error", f.ok ? Json(nullptr) : Json(f.error)}, {"offers", f.offers}});
  Json pairs = Json::array();
  for (const auto& p : report.pairs)
    pairs.push_back({{"recipe", p.recipe},
                     {"tier", p.tier},
                     {"policy", p.policy},
                     {"built", p.built},
                     {"problem", p.problem.empty() ? Json(nullptr) : Json(p.problem)},
                     {"toolkit", p.built ? Json(p.toolkit) : Json(nullptr)},
                     {"image", p.built ? Json(p.image) : Json(nullptr)},
                     {"stale", p.decision.stale},
                     {"reason", p.decision.stale ? Json(p.decision.reason) : Json(nullptr)},
                     {"take", p.decision.take ? offer_json(*p.decision.take) : Json(nullptr)},
                     {"declined", p.decision.declined}});
  return Json{{"feeds", std::move(feeds)}, {"pairs", std::move(pairs)}};
}

}  // namespace

void emit(Io& io, const app::WatchReport& report, Format format) {
  if (format == Format::json)
    io.out << watch_json(report).dump(2) << "\n";
  else
    io.out << watch_text(report);
  if (report.exit_code() != util::ExitCode::ok)
    io.err << "orchestrate: error: every feed failed; nothing could be judged\n";
  io.exit_code = report.exit_code();
}

}  // namespace orc::cli
