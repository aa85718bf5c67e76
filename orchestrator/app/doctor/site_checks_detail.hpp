#pragma once
// The steps of check_site, one file per outside system; each appends its
// results to the report. Private to app/doctor.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/app/doctor/site_checks.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::app::doctor_detail {

// What the checks share: the configuration when it read, the engine when it answered.
struct SiteContext {
  const SiteRequest& request;
  std::shared_ptr<const recipe::Config> config;  // null: none, or it did not read
  std::optional<engine::Discovery> discovery;    // null: discovery itself failed
  std::optional<engine::DockerEngine> engine;    // set when a container engine answered
  std::vector<CheckResult>& out;

  // Appends a result of `id` with the table's fix when it failed or warned
  // and `fix` is empty; returns it for more words.
  CheckResult& add(CheckId id, std::string subject, CheckStatus status, std::string detail, std::string fix = {});
};

void check_engine(SiteContext& site);  // engine
void check_tiers(SiteContext& site);   // toolkit and image, per tier
void check_remote(SiteContext& site);  // remote
void check_keys(SiteContext& site);    // signing_key, trusted_keys
void check_slurm(SiteContext& site);   // slurm

// "3.2 s", "10 s": a bound as the results say it.
std::string bound_text(std::chrono::milliseconds bound);

// What a util::Failure says, each diagnostic without the "orchestrate:
// error: " of a command's last line, joined with "; ".
std::string failure_words(const util::Failure& failure);
std::string diagnostic_words(const util::Diagnostic& diagnostic);

}  // namespace orc::app::doctor_detail
