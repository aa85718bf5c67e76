// The report as JSON (--json, and the body of the notify POST), and the
// notification itself: one POST per cycle that rebuilt or failed something,
// shaped as chat webhooks take it ({"text": ...}) with the whole report
// beside the text for scripts.
#include <nlohmann/json.hpp>

#include "orchestrator/app/watch/watch_detail.hpp"
#include "orchestrator/registry/client.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using Json = nlohmann::ordered_json;

Json null_or(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

Json offer_json(const watch::Offer& o) {
  Json out{{"toolkit", o.toolkit.str()}, {"image", o.image}, {"digest", o.digest}, {"feed", o.feed}};
  if (o.debian) {
    out["packages"] = o.packages;
    out["missing"] = o.missing;
  }
  return out;
}

Json outcome_json(const WatchOutcome& o) {
  return Json{{"action", std::string(to_string(o.action))},
              {"detail", null_or(o.detail)},
              {"set", o.set ? Json(o.set->to_string()) : Json(nullptr)},
              {"image_digest", null_or(o.image_digest)},
              {"image_made", null_or(o.image_made)},
              {"probe", null_or(o.probe)},
              {"table_differences", o.table_differences},
              {"smoke", null_or(o.smoke)},
              {"pushed", null_or(o.pushed)},
              {"push_error", null_or(o.push_error)},
              {"exit_code", static_cast<int>(o.exit_code)}};
}

Json report_json(const WatchReport& report) {
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
                     {"problem", null_or(p.problem)},
                     {"toolkit", p.built ? Json(p.toolkit) : Json(nullptr)},
                     {"image", p.built ? Json(p.image) : Json(nullptr)},
                     {"set", p.current_set ? Json(p.current_set->to_string()) : Json(nullptr)},
                     {"stale", p.decision.stale},
                     {"reason", p.decision.stale ? Json(p.decision.reason) : Json(nullptr)},
                     {"make_image", p.decision.make_image},
                     {"take", p.decision.take ? offer_json(*p.decision.take) : Json(nullptr)},
                     {"declined", p.decision.declined},
                     {"outcome", outcome_json(p.outcome)}});
  return Json{
      {"dry_run", report.dry_run},
      {"followed", report.followed ? Json{{"heading", report.followed->heading}, {"about", report.followed->about}}
                                   : Json(nullptr)},
      {"feeds", std::move(feeds)},
      {"pairs", std::move(pairs)},
      {"collected_sets", report.collected_sets},
      {"pruned_remote", report.pruned_remote},
      {"prune_error", null_or(report.prune_error)},
      {"stopped", report.stop.stopped ? Json(report.stop.text()) : Json(nullptr)}};
}

// "http://hooks.example:8080": a webhook's path is its secret.
std::string origin_of(std::string_view url) {
  const auto scheme = url.find("://");
  const auto start = scheme == std::string_view::npos ? 0 : scheme + 3;
  std::string_view host = url.substr(start, url.find('/', start) - start);
  if (const auto at = host.rfind('@'); at != std::string_view::npos) host.remove_prefix(at + 1);
  return std::string(url.substr(0, start)) + std::string(host);
}

// The lines a person reads in the chat.
std::string summary(const WatchReport& report) {
  std::size_t rebuilt = 0, failed = 0;
  std::string lines;
  for (const auto& p : report.pairs) {
    if (p.outcome.action == WatchAction::rebuilt) {
      ++rebuilt;
      lines += "\n- " + p.recipe + "/" + p.tier + ": rebuilt, " + p.decision.reason;
      if (p.outcome.set) lines += ", set " + p.outcome.set->to_string().substr(0, 19);
      if (!p.outcome.pushed.empty()) lines += ", pushed as " + p.outcome.pushed;
      if (!p.outcome.smoke.empty()) lines += ", smoke " + p.outcome.smoke;
    } else if (p.outcome.action == WatchAction::failed) {
      ++failed;
      lines += "\n- " + p.recipe + "/" + p.tier + ": FAILED (" + p.decision.reason + "): " + p.outcome.detail;
    }
  }
  return "orchestrate watch: " + std::to_string(rebuilt) + " rebuilt, " + std::to_string(failed) + " failed" + lines;
}

}  // namespace

std::string watch_json(const WatchReport& report) { return report_json(report).dump(2); }

namespace detail {

void notify(const std::string& url, WatchReport& report, const std::atomic<bool>* cancel) {
  const Json body{{"text", summary(report)}, {"report", report_json(report)}};
  net::Request request{.method = "POST",
                       .url = url,
                       .headers = {{"Content-Type", "application/json"}},
                       .body = body.dump(),
                       .timeout = std::chrono::seconds(30),
                       .cancel = cancel};
  const auto response = registry::make_curl_transport()->send(request);
  const std::string where = "POST to the notify URL at " + origin_of(url);
  if (!response)
    report.notify_error = where + " failed: " + response.error().message;
  else if (!response->ok())
    report.notify_error = where + " answered HTTP " + std::to_string(response->status);
  else
    report.notified = true;
}

}  // namespace detail
}  // namespace orc::app
