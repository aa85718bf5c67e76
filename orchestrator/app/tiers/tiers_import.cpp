#include "orchestrator/app/tiers/tiers_import.hpp"

#include <nlohmann/json.hpp>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/fs.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using util::ExitCode;

inventory::Proposal tiers_import(const TiersImportRequest& request) {
  if (request.files.empty())
    throw util::Failure(ExitCode::bad_input,
                        "orchestrate tiers import needs at least one file: nvidia-smi CSV, `scontrol show node -o` "
                        "or `kubectl get nodes -o json` output ('-' reads standard input)");
  inventory::Inventory all;
  for (const std::string& file : request.files) {
    std::string text;
    std::string node;
    if (file == "-") {
      text = request.stdin_text;
      node = "stdin";
    } else {
      auto read = util::read_file(file);
      if (!read) throw util::Failure(ExitCode::bad_input, read.error().message);
      text = std::move(*read);
      // One nvidia-smi file per node: the file's name says which
      // ("gpu01.csv", "gpu01" or "gpu01.nvidia-smi.csv").
      node = fs::path(file).filename().string();
      node = node.substr(0, node.find('.'));
    }
    auto parsed = inventory::parse_inventory(text, file, node);
    if (!parsed) throw util::Failure(ExitCode::bad_input, {parsed.error()});
    all.merge(std::move(*parsed));
  }
  return inventory::propose_tiers(all);
}

std::string tiers_json(const inventory::Proposal& proposal) {
  using Json = nlohmann::ordered_json;
  Json tiers = Json::array();
  for (const auto& t : proposal.tiers) {
    Json ccs = Json::array();
    for (const auto& cc : t.ccs) ccs.push_back(cc.dotted());
    Json slurm = Json::object();
    if (!t.partition.empty()) slurm["partition"] = t.partition;
    if (!t.constraint.empty()) slurm["constraint"] = t.constraint;
    if (!t.gres.empty()) slurm["gres"] = t.gres;
    Json gpus = Json::array();
    for (const auto& g : t.gpus)
      gpus.push_back(g.declared ? Json{{"name", g.name}, {"cc", g.declared->dotted()}} : Json(g.name));
    tiers.push_back(Json{{"name", t.name},
                         {"gpus", std::move(gpus)},
                         {"ccs", std::move(ccs)},
                         {"driver", t.driver ? Json(t.driver->str()) : Json(nullptr)},
                         {"drivers", t.drivers},
                         {"nodes", t.nodes},
                         {"products", t.products},
                         {"slurm", slurm.empty() ? Json(nullptr) : slurm},
                         {"kubernetes", t.selector.empty() ? Json(nullptr) : Json{{"selector", t.selector}}},
                         {"notes", t.notes}});
  }
  Json problems = Json::array();
  for (const auto& p : proposal.problems)
    problems.push_back(Json{{"node", p.node}, {"file", p.file}, {"message", p.message}});
  return Json{{"nodes", proposal.nodes}, {"tiers", std::move(tiers)}, {"problems", std::move(problems)}}.dump(2) +
         "\n";
}

}  // namespace orc::app
