// `orchestrate doctor`, rendered.
#include <nlohmann/json.hpp>

#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/table.hpp"
#include "orchestrator/smoke/result.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

using nlohmann::json;

json toolkits_json(const std::vector<site::HostToolkit>& toolkits) {
  json out = json::array();
  for (const auto& t : toolkits) {
    json lacks = json::array();
    for (const auto& m : t.inventory.missing)
      lacks.push_back({{"part", compat::part_info(m.part).name},
                       {"always_needed", compat::part_info(m.part).always},
                       {"files", m.files}});
    out.push_back({{"version", t.version.str()},
                   {"root", util::utf8_escaped(t.root.string())},
                   {"found_by", t.found_by},
                   {"complete", t.inventory.complete()},
                   {"lacks", std::move(lacks)}});
  }
  return out;
}

// One line per toolkit: what every build needs that it lacks (then it is
// never planned with), and the libraries a recipe may need that it lacks.
std::string toolkits_text(const std::vector<site::HostToolkit>& toolkits) {
  if (toolkits.empty()) return "host toolkits: none found\n";
  std::string out = "host toolkits (what the host engine plans with):\n";
  for (const auto& t : toolkits) {
    std::vector<const compat::MissingPart*> needed;
    std::vector<std::string> optional;
    for (const auto& m : t.inventory.missing) {
      if (compat::part_info(m.part).always)
        needed.push_back(&m);
      else
        optional.emplace_back(compat::part_info(m.part).name);
    }
    out += "  " + t.version.str() + " " + util::printable(t.root.string()) + ": ";
    out += needed.empty() ? "complete" : "INCOMPLETE, never planned: lacks " + compat::describe_missing(needed);
    if (!optional.empty()) out += "; without " + util::join(optional, ", ");
    out += "\n";
  }
  return out;
}

std::string doctor_json(const app::DoctorReport& r) {
  json j{{"driver",
          {{"version", r.driver_version.empty() ? json(nullptr) : json(r.driver_version)},
           {"cuda", r.driver_cuda_version ? json(smoke::cuda_version_text(r.driver_cuda_version)) : json(nullptr)},
           {"error", r.driver_error ? json(*r.driver_error) : json(nullptr)}}},
         {"gpus", json::array()},
         {"toolkit",
          {{"nvcc", r.nvcc.empty() ? json(nullptr) : json(r.nvcc)},
           {"version", r.toolkit.empty() ? json(nullptr) : json(r.toolkit)}}},
         {"toolkits", toolkits_json(r.toolkits)},
         {"searched", r.searched},
         {"libraries", json::array()}};
  for (const auto& g : r.gpus)
    j["gpus"].push_back({{"name", g.name},
                         {"cc", g.cc.dotted()},
                         {"known", !g.architecture.empty()},
                         {"architecture", g.architecture.empty() ? json(nullptr) : json(g.architecture)}});
  for (const auto& l : r.libraries) {
    json lib{{"framework", l.framework},
             {"path", util::utf8_escaped(l.path)},
             {"device_code", l.device_code},
             {"sass", l.sass},
             {"ptx", l.ptx},
             {"verdicts", json::array()}};
    for (const auto& v : l.verdicts)
      lib["verdicts"].push_back({{"gpu", v.gpu},
                                 {"name", v.gpu < r.gpus.size() ? json(r.gpus[v.gpu].name) : json(nullptr)},
                                 {"cc", v.cc.dotted()},
                                 {"outcome", v.outcome},
                                 {"detail", v.detail},
                                 {"runtime_kernels", v.runtime_kernels}});
    j["libraries"].push_back(std::move(lib));
  }
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string doctor_text(const app::DoctorReport& r) {
  std::string out;
  if (r.driver_error) {
    out += "GPUs: none usable: " + *r.driver_error + "\n";
  } else {
    out += "driver " + (r.driver_version.empty() ? std::string("(version unknown)") : r.driver_version) +
           ", supports CUDA " + smoke::cuda_version_text(r.driver_cuda_version) + "\n";
    for (std::size_t i = 0; i < r.gpus.size(); ++i) {
      const app::DoctorGpu& g = r.gpus[i];
      out += "GPU " + std::to_string(i) + ": " + g.name + ", CC " + g.cc.dotted() + " (" +
             (g.architecture.empty() ? std::string("unknown to the GPU tables") : g.architecture) + ")\n";
    }
  }
  out += "toolkit: " +
         (r.nvcc.empty() ? std::string("no nvcc on PATH or in /usr/local/cuda")
                         : r.nvcc + " (CUDA " + (r.toolkit.empty() ? "version unknown" : r.toolkit) + ")") +
         "\n";
  out += toolkits_text(r.toolkits);
  if (r.libraries.empty()) {
    out += "frameworks: none found" +
           (r.searched.empty() ? std::string(" (no python3; use --path)") : " in " + util::join(r.searched, ", ")) +
           "\n";
    return out;
  }
  std::size_t host_only = 0;
  for (const auto& l : r.libraries) {
    if (!l.device_code) {
      ++host_only;
      continue;
    }
    out += l.framework + ": " + l.path + "\n    SASS " + (l.sass.empty() ? "-" : util::join(l.sass, " ")) + "; PTX " +
           (l.ptx.empty() ? "-" : util::join(l.ptx, " ")) + "\n";
    Table verdicts;
    for (const auto& v : l.verdicts)
      verdicts.add_row({"GPU " + std::to_string(v.gpu) + " (" + v.cc.dotted() + "):", v.outcome, v.detail});
    out += verdicts.render(4);
  }
  if (host_only) out += std::to_string(host_only) + " more libraries hold no device code\n";
  return out;
}

}  // namespace

std::string render(const app::DoctorReport& report, Format format) {
  return format == Format::json ? doctor_json(report) : doctor_text(report);
}

}  // namespace orc::cli
