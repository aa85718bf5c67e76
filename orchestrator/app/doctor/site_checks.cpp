#include "orchestrator/app/doctor/site_checks.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "orchestrator/app/doctor/site_checks_detail.hpp"
#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::array<CheckInfo, 8> k_checks{{
    {CheckId::config, "config", "the configuration file is found and valid",
     "cp recipes/orchestrate.yaml orchestrate.yaml (then edit it), or -f FILE / ORCHESTRATE_CONFIG=FILE"},
    {CheckId::engine, "engine", "a container engine answers on its socket (else builds run on the host)",
     "start dockerd or `podman system service`, or set DOCKER_HOST=unix:///PATH/docker.sock"},
    {CheckId::toolkit, "toolkit",
     "every recipe of the tier resolves to a toolkit (on the host engine: one installed here)",
     "orchestrate plan TIER; for the host engine: scripts/install-cuda-toolkits.sh or ORCHESTRATE_HOST_TOOLKITS=DIR"},
    {CheckId::image, "image", "the build images of the tier's plans are in the engine, as recorded when built",
     "orchestrate images build NAME"},
    {CheckId::remote, "remote",
     "the remote registry answers /v2/ with the configured credentials and its repository can be listed",
     "ORCHESTRATE_REMOTE=https://USER:PASSWORD@HOST/REPOSITORY, or remote: in orchestrate.yaml"},
    {CheckId::signing_key, "signing-key", "this machine's signing key is present and readable",
     "orchestrate key generate"},
    {CheckId::trusted_keys, "trusted-keys", "the keys fetch and pull trust are readable, and there are some",
     "orchestrate key trust FILE (FILE: what `orchestrate key export` prints on the build node)"},
    {CheckId::slurm, "slurm",
     "the Slurm controller answers, and each tier's partition and constraint are offered by its nodes",
     "start slurmctld and set SLURM_CONF=FILE (`scontrol ping` says UP), or correct the tier's slurm:"},
}};

// What the configuration check says, and the configuration when it read.
std::shared_ptr<const recipe::Config> check_config(doctor_detail::SiteContext& site) {
  const SiteRequest& r = site.request;
  if (r.config.empty()) {
    site.add(CheckId::config, "", CheckStatus::warn,
             "no configuration: ORCHESTRATE_CONFIG is not set and neither ./orchestrate.yaml nor "
             "./recipes/orchestrate.yaml exists, so tiers, their toolkits and images, the configured remote "
             "and Slurm placement are not checked (a node that only fetches needs none)");
    return nullptr;
  }
  std::error_code ec;
  if (!r.config_named && !fs::exists(r.config, ec)) {
    site.add(CheckId::config, r.config.string(), CheckStatus::warn, "no such file");
    return nullptr;
  }
  try {
    auto config = load_plan_config(r.config);
    std::string detail =
        std::to_string(config->tiers.size()) + " tiers, " + std::to_string(config->recipes.size()) + " recipes";
    if (!config->warnings.empty()) {
      detail += "; " + std::to_string(config->warnings.size()) + " warnings:";
      for (const auto& w : config->warnings) detail += " " + doctor_detail::diagnostic_words(w) + ";";
      detail.pop_back();
    }
    site.add(CheckId::config, r.config.string(), config->warnings.empty() ? CheckStatus::ok : CheckStatus::warn, detail,
             config->warnings.empty() ? "" : "edit " + r.config.string() + " as the warnings say");
    return config;
  } catch (const util::Failure& failure) {
    site.add(CheckId::config, r.config.string(), CheckStatus::fail, doctor_detail::failure_words(failure),
             "correct " + r.config.string() + " as said (`orchestrate plan` shows each line with a caret)");
    return nullptr;
  }
}

}  // namespace

std::span<const CheckInfo> check_table() { return k_checks; }

const CheckInfo& check_info(CheckId id) { return *std::ranges::find(k_checks, id, &CheckInfo::id); }

std::string_view to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::ok:
      return "ok";
    case CheckStatus::warn:
      return "warn";
    case CheckStatus::fail:
      return "fail";
    case CheckStatus::skipped:
      return "skipped";
  }
  return "?";
}

util::ExitCode SiteReport::exit_code() const {
  const bool failed = std::ranges::any_of(checks, [](const CheckResult& c) { return c.status == CheckStatus::fail; });
  return failed ? util::ExitCode::check_failed : util::ExitCode::ok;
}

SiteRequest site_request_for(const std::string& given_file) {
  SiteRequest request;
  request.config_named = !given_file.empty() || util::env_get("ORCHESTRATE_CONFIG").has_value();
  request.config = site::locate_config(given_file);
  std::error_code ec;
  if (!request.config_named && !fs::exists(request.config, ec)) request.config.clear();
  return request;
}

namespace doctor_detail {

CheckResult& SiteContext::add(CheckId id, std::string subject, CheckStatus status, std::string detail,
                              std::string fix) {
  if (fix.empty() && (status == CheckStatus::fail || status == CheckStatus::warn))
    fix = std::string(check_info(id).fix);
  out.push_back(CheckResult{.id = id,
                            .subject = std::move(subject),
                            .status = status,
                            .detail = std::move(detail),
                            .fix = std::move(fix),
                            .took = {}});
  return out.back();
}

std::string diagnostic_words(const util::Diagnostic& d) {
  std::string line = d.headline();
  constexpr std::string_view k_prefix = "orchestrate: error: ";
  if (line.starts_with(k_prefix)) line.erase(0, k_prefix.size());
  return line;
}

std::string failure_words(const util::Failure& failure) {
  std::vector<std::string> said;
  for (const auto& d : failure.diagnostics()) said.push_back(diagnostic_words(d));
  if (said.empty()) said.emplace_back(failure.what());
  return util::join(said, "; ");
}

std::string bound_text(std::chrono::milliseconds bound) {
  char text[32];
  if (bound.count() % 1000 == 0)
    std::snprintf(text, sizeof text, "%lld s", static_cast<long long>(bound.count() / 1000));
  else
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(bound.count()) / 1000.0);
  return text;
}

}  // namespace doctor_detail

SiteReport check_site(const SiteRequest& request) {
  SiteReport report;
  doctor_detail::SiteContext site{
      .request = request, .config = nullptr, .discovery = std::nullopt, .engine = std::nullopt, .out = report.checks};
  // Each step's time goes to the results it added.
  const auto timed = [&](auto&& step) {
    const std::size_t before = report.checks.size();
    const auto start = Clock::now();
    step();
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    for (std::size_t i = before; i < report.checks.size(); ++i) report.checks[i].took = took;
  };
  timed([&] { site.config = check_config(site); });
  if (site.config) report.config = request.config;
  timed([&] { doctor_detail::check_engine(site); });
  timed([&] { doctor_detail::check_tiers(site); });
  timed([&] { doctor_detail::check_remote(site); });
  timed([&] { doctor_detail::check_keys(site); });
  timed([&] { doctor_detail::check_slurm(site); });
  // The table's order, whatever order the steps found things in.
  std::ranges::stable_sort(report.checks, {}, [](const CheckResult& c) {
    return std::ranges::find(k_checks, c.id, &CheckInfo::id) - k_checks.begin();
  });
  return report;
}

}  // namespace orc::app
