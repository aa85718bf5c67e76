// `build --engine slurm` and `smoke --engine slurm`: a line per job, or JSON.
#include <nlohmann/json.hpp>

#include "orchestrator/app/cluster/slurm.hpp"
#include "orchestrator/cli/render.hpp"

namespace orc::cli {

using app::work_name;
using util::ExitCode;

std::string render_slurm_text(const app::SlurmReport& report) {
  std::string out;
  for (const auto& j : report.jobs) {
    out += j.recipe + "/" + j.tier + ": ";
    if (j.id.empty())
      out += "not submitted: " + j.message + "\n";
    else if (j.exit_code == ExitCode::ok)
      out += std::string(work_name(report.work)) + " job " + j.id + " " + j.state + " on " + j.nodes + " (partition " +
             j.partition + (j.features.empty() ? "" : ", constraint " + j.features) + "); " + j.set +
             " pulled and verified\n";
    else
      out += j.message + "\n";
  }
  return out;
}

std::string render_slurm_json(const app::SlurmReport& report) {
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const auto& j : report.jobs)
    jobs.push_back(
        {{"recipe", j.recipe},
         {"tier", j.tier},
         {"job", j.id.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(j.id)},
         {"state", j.state},
         {"nodes", j.nodes},
         {"partition", j.partition},
         {"constraint", j.features},
         {"set", j.set.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(j.set)},
         {"key", j.key.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(j.key)},
         {"message", j.message.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(j.message)},
         {"exit_code", static_cast<int>(j.exit_code)}});
  return nlohmann::ordered_json{{"work", std::string(work_name(report.work))},
                                {"jobs", std::move(jobs)},
                                {"cancelled", report.cancelled},
                                {"exit_code", static_cast<int>(report.exit_code())}}
             .dump(2) +
         "\n";
}

}  // namespace orc::cli
