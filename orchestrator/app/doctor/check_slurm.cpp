// Slurm, as `build|smoke --engine slurm` reaches it: its commands on PATH
// reading SLURM_CONF (engine/slurm.hpp), and each tier's placement as the
// dispatcher makes it (slurm_placement).
#include <algorithm>

#include "orchestrator/app/cluster/slurm.hpp"
#include "orchestrator/app/doctor/site_checks_detail.hpp"
#include "orchestrator/engine/slurm.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app::doctor_detail {

namespace {

namespace slurm = engine::slurm;

constexpr const char* k_system_conf = "/etc/slurm/slurm.conf";

// Why this site uses Slurm, or empty when nothing says it does.
std::string why_slurm(const recipe::Config* config) {
  std::vector<std::string> why;
  if (config)
    for (const auto& tier : config->tiers)
      if (tier.slurm) why.push_back("tier " + tier.name + " has slurm:");
  if (const auto conf = util::env_get("SLURM_CONF"); conf && !conf->empty()) why.push_back("SLURM_CONF is set");
  std::error_code ec;
  if (why.empty() && std::filesystem::exists(k_system_conf, ec))
    why.emplace_back(std::string(k_system_conf) + " exists");
  return util::join(why, ", ");
}

// One tier's placement against the nodes sinfo lists.
void check_tier(SiteContext& site, const recipe::Tier& tier, const std::vector<slurm::NodeRow>& rows) {
  const recipe::TierSlurm where = slurm_placement(tier, SlurmWork::build);
  // A placement the tier wrote is the site's intent; one derived from its
  // GPUs is only what --engine slurm would try.
  const CheckStatus bad = tier.slurm ? CheckStatus::fail : CheckStatus::warn;
  const std::string fix = tier.slurm
                              ? "correct tier " + tier.name + "'s slurm: (`sinfo -N -o '%N %P %f'` lists what exists)"
                              : "give tier " + tier.name + " a slurm: partition or constraint its nodes have";
  std::vector<const slurm::NodeRow*> in_partition;
  for (const auto& row : rows)
    if (where.partition.empty() || row.partition == where.partition) in_partition.push_back(&row);
  const std::string place = where.partition.empty() ? "any partition" : "partition " + where.partition;
  if (in_partition.empty()) {
    site.add(CheckId::slurm, tier.name, bad, "Slurm lists no " + place, fix);
    return;
  }
  std::vector<std::string> nodes;
  bool judged = true;
  for (const auto* row : in_partition) {
    const auto meets = slurm::meets_constraint(where.constraint, row->features);
    if (!meets) judged = false;
    if (meets.value_or(false) && std::ranges::find(nodes, row->node) == nodes.end()) nodes.push_back(row->node);
  }
  if (!judged) {
    site.add(CheckId::slurm, tier.name, CheckStatus::skipped,
             "constraint '" + where.constraint + "' is of a form doctor does not judge; sbatch will");
    return;
  }
  if (nodes.empty()) {
    site.add(CheckId::slurm, tier.name, bad, "no node in " + place + " offers '" + where.constraint + "'", fix);
    return;
  }
  site.add(CheckId::slurm, tier.name, CheckStatus::ok,
           place + ", constraint '" + where.constraint + "': " + util::join(nodes, ", "));
}

}  // namespace

void check_slurm(SiteContext& site) {
  const std::string why = why_slurm(site.config.get());
  if (why.empty()) {
    site.add(CheckId::slurm, "", CheckStatus::skipped,
             std::string("not used here: no tier has slurm:, SLURM_CONF is unset and there is no ") + k_system_conf);
    return;
  }
  const auto path = util::env_get("PATH").value_or("");
  if (!util::find_program("sinfo", path)) {
    site.add(CheckId::slurm, "", CheckStatus::fail, why + ", but there is no sinfo on PATH",
             "install Slurm's client commands (Debian: slurm-client) on this machine");
    return;
  }
  auto rows = slurm::list_nodes(site.request.timeout);
  if (!rows) {
    site.add(CheckId::slurm, "", CheckStatus::fail, why + ", but slurmctld did not answer: " + rows.error());
    return;
  }
  std::vector<std::string> partitions;
  std::size_t idle = 0;
  std::vector<std::string> nodes;
  for (const auto& row : *rows) {
    if (std::ranges::find(partitions, row.partition) == partitions.end()) partitions.push_back(row.partition);
    if (std::ranges::find(nodes, row.node) != nodes.end()) continue;
    nodes.push_back(row.node);
    if (row.state.starts_with("idle") || row.state.starts_with("mixed")) ++idle;
  }
  const auto conf = util::env_get("SLURM_CONF");
  site.add(CheckId::slurm, conf && !conf->empty() ? *conf : "", nodes.empty() ? CheckStatus::warn : CheckStatus::ok,
           "slurmctld answers: " + std::to_string(nodes.size()) + " nodes (" + std::to_string(idle) +
               " idle or mixed) in " +
               (partitions.empty() ? std::string("no partition") : util::join(partitions, ", ")));
  if (site.config)
    for (const auto& tier : site.config->tiers) check_tier(site, tier, *rows);
}

}  // namespace orc::app::doctor_detail
