#include "orchestrator/app/tables.hpp"

#include <nlohmann/json.hpp>

#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/compat/cudnn.hpp"
#include "orchestrator/compat/toolkits.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using nlohmann::ordered_json;

std::vector<std::string> names_of(const std::vector<arch::ComputeCapability>& ccs, bool sm) {
  std::vector<std::string> out;
  for (const auto& cc : ccs) out.push_back(sm ? cc.sm() : cc.dotted());
  return out;
}

std::vector<std::string> strings_of(const std::vector<std::string_view>& views) { return {views.begin(), views.end()}; }

ordered_json gpu_json(const arch::Gpu& g) {
  const auto window = compat::toolkit_window(g.cc);
  ordered_json j;
  j["name"] = g.name;
  j["cc"] = g.cc.dotted();
  j["sm"] = g.cc.sm();
  j["architecture"] = g.architecture;
  j["segment"] = arch::segment_name(g.segment);
  j["nvcc_first"] = window.first ? ordered_json(window.first->version.str()) : ordered_json(nullptr);
  j["nvcc_last"] = window.last ? ordered_json(window.last->version.str()) : ordered_json(nullptr);
  return j;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string gpu_line(const arch::Gpu& g) {
  const auto window = compat::toolkit_window(g.cc);
  std::string nvcc = window.first ? window.first->version.str() + " .. " + window.last->version.str() : "none known";
  return pad(std::string(g.name), 34) + pad(g.cc.dotted(), 6) + pad(std::string(g.architecture), 17) +
         pad(std::string(arch::segment_name(g.segment)), 13) + "nvcc " + nvcc + "\n";
}

}  // namespace

std::string list_gpus(const std::optional<std::string>& name, Format format) {
  if (name) {
    auto gpu = arch::find_gpu(*name);
    if (!gpu) {
      throw util::Failure(util::ExitCode::bad_input,
                          {util::Diagnostic{.message = gpu.error().message, .suggestion = gpu.error().suggestion}});
    }
    return format == Format::json ? gpu_json(*gpu).dump(2) + "\n" : gpu_line(*gpu);
  }
  if (format == Format::json) {
    ordered_json all = ordered_json::array();
    for (const auto& g : arch::gpu_table()) all.push_back(gpu_json(g));
    return all.dump(2) + "\n";
  }
  std::string out = pad("GPU", 34) + pad("CC", 6) + pad("architecture", 17) + pad("segment", 13) + "toolkits\n";
  for (const auto& g : arch::gpu_table()) out += gpu_line(g);
  return out;
}

std::string list_toolkits(bool cudnn, Format format) {
  if (cudnn) {
    ordered_json all = ordered_json::array();
    std::string text = pad("cuDNN", 8) + pad("min CC", 8) + "CUDA\n";
    for (const auto& c : compat::cudnn_table()) {
      std::vector<std::string> spans;
      for (const auto& s : c.cuda) spans.push_back(s.first == s.last ? s.first.str() : s.first.str() + "-" + s.last.str());
      ordered_json j;
      j["version"] = c.version.str();
      j["cuda"] = spans;
      j["min_cc"] = c.min_cc.dotted();
      j["unconfirmed"] = strings_of(c.unconfirmed);
      j["source"] = c.source;
      all.push_back(std::move(j));
      text += pad(c.version.str(), 8) + pad(c.min_cc.dotted(), 8) + util::join(spans, ", ") +
              (c.unconfirmed.empty() ? "" : "  (UNCONFIRMED: " + util::join(strings_of(c.unconfirmed), ", ") + ")") + "\n";
    }
    return format == Format::json ? all.dump(2) + "\n" : text;
  }
  ordered_json all = ordered_json::array();
  std::string text = pad("CUDA", 6) + pad("archs", 18) + pad("default", 9) + pad("driver", 12) + pad("gcc", 5) + "clang\n";
  for (const auto& t : compat::toolkit_table()) {
    ordered_json j;
    j["version"] = t.version.str();
    j["released"] = t.released;
    j["archs"] = names_of(t.archs, true);
    j["deprecated"] = names_of(t.deprecated, true);
    j["removed"] = names_of(t.removed, true);
    j["default_arch"] = t.default_arch.sm();
    j["min_driver"] = t.min_driver.str();
    j["max_gcc"] = t.max_gcc;
    j["max_clang"] = t.max_clang;
    j["ptx_isa"] = t.ptx_isa.empty() ? ordered_json(nullptr) : ordered_json(t.ptx_isa.str());
    j["unconfirmed"] = strings_of(t.unconfirmed);
    j["source"] = t.source;
    all.push_back(std::move(j));
    if (!t.released) {
      text += pad(t.version.str(), 6) + "(never released)\n";
      continue;
    }
    const std::string span = t.archs.empty() ? "-" : t.archs.front().sm() + ".." + t.archs.back().sm();
    text += pad(t.version.str(), 6) + pad(span, 18) + pad(t.default_arch.sm(), 9) + pad(t.min_driver.str(), 12) +
            pad(std::to_string(t.max_gcc), 5) + std::to_string(t.max_clang);
    if (!t.deprecated.empty()) text += "  deprecated: " + util::join(names_of(t.deprecated, true), " ");
    if (!t.unconfirmed.empty()) text += "  (UNCONFIRMED: " + util::join(strings_of(t.unconfirmed), ", ") + ")";
    text += "\n";
  }
  return format == Format::json ? all.dump(2) + "\n" : text;
}

}  // namespace orc::app
