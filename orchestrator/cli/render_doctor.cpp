// `orchestrate doctor`, rendered.
#include <array>
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

// The site checks: every result with what its check checks and its fix.
json site_json(const app::SiteReport& site) {
  json checks = json::array();
  std::size_t failed = 0;
  for (const auto& c : site.checks) {
    const app::CheckInfo& info = app::check_info(c.id);
    failed += c.status == app::CheckStatus::fail;
    checks.push_back({{"check", info.name},
                      {"checks", info.checks},
                      {"subject", c.subject.empty() ? json(nullptr) : json(util::utf8_escaped(c.subject))},
                      {"status", app::to_string(c.status)},
                      {"detail", util::utf8_escaped(c.detail)},
                      {"fix", c.fix.empty() ? json(nullptr) : json(c.fix)},
                      {"seconds", static_cast<double>(c.took.count()) / 1000.0}});
  }
  return {{"config", site.config.empty() ? json(nullptr) : json(util::utf8_escaped(site.config.string()))},
          {"checks", std::move(checks)},
          {"failed", failed},
          {"exit_code", static_cast<int>(site.exit_code())}};
}

// One row per result, its fix on a row below; then the counts.
std::string site_text(const app::SiteReport& site) {
  static constexpr std::array<std::pair<app::CheckStatus, const char*>, 4> k_marks{
      {{app::CheckStatus::ok, "[ok]"},
       {app::CheckStatus::warn, "[warn]"},
       {app::CheckStatus::fail, "[FAIL]"},
       {app::CheckStatus::skipped, "[skip]"}}};
  std::array<std::size_t, 4> counts{};
  Table table;
  for (const auto& c : site.checks) {
    const auto index = static_cast<std::size_t>(c.status);
    ++counts[index];
    const std::string what = util::printable(c.subject.empty() ? c.detail : c.subject + ": " + c.detail);
    table.add_row({k_marks[index].second, std::string(app::check_info(c.id).name), what});
    if (!c.fix.empty()) table.add_row({"", "", "fix: " + c.fix});
  }
  std::string out = "site:\n" + table.render(2);
  out += "site checks: " + std::to_string(counts[0]) + " ok, " + std::to_string(counts[1]) + " warnings, " +
         std::to_string(counts[2]) + " failed, " + std::to_string(counts[3]) + " skipped\n";
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
  if (r.site) j["site"] = site_json(*r.site);
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string node_text(const app::DoctorReport& r) {
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

std::string doctor_text(const app::DoctorReport& r) {
  std::string out = node_text(r);
  if (r.site) out += site_text(*r.site);
  return out;
}

}  // namespace

std::string render(const app::DoctorReport& report, Format format) {
  return format == Format::json ? doctor_json(report) : doctor_text(report);
}

}  // namespace orc::cli
