// `orchestrate gpus` and `orchestrate toolkits`, rendered.
#include <nlohmann/json.hpp>

#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/table.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

using nlohmann::ordered_json;

std::vector<std::string> names_of(const std::vector<arch::ComputeCapability>& ccs, bool sm) {
  std::vector<std::string> out;
  for (const auto& cc : ccs) out.push_back(sm ? cc.sm() : cc.dotted());
  return out;
}

std::vector<std::string> strings_of(const std::vector<std::string_view>& views) { return {views.begin(), views.end()}; }

ordered_json version_or_null(const compat::Toolkit* t) {
  return t ? ordered_json(t->version.str()) : ordered_json(nullptr);
}

ordered_json gpu_json(const app::GpuRow& row) {
  ordered_json j;
  j["name"] = row.gpu.name;
  j["cc"] = row.gpu.cc.dotted();
  j["sm"] = row.gpu.cc.sm();
  j["architecture"] = row.gpu.architecture;
  j["segment"] = arch::segment_name(row.gpu.segment);
  j["nvcc_first"] = version_or_null(row.nvcc.first);
  j["nvcc_last"] = version_or_null(row.nvcc.last);
  return j;
}

std::string unconfirmed_note(const std::vector<std::string_view>& fields) {
  return fields.empty() ? "" : "(UNCONFIRMED: " + util::join(strings_of(fields), ", ") + ")";
}

ordered_json toolkit_json(const compat::Toolkit& t) {
  ordered_json j;
  j["version"] = t.version.str();
  j["released"] = t.released;
  j["archs"] = names_of(t.archs, true);
  j["deprecated"] = names_of(t.deprecated, true);
  j["removed"] = names_of(t.removed, true);
  // Unknown is null, never a placeholder (12.7 never shipped: no default
  // arch, driver or compilers).
  j["default_arch"] = t.default_arch.major() > 0 ? ordered_json(t.default_arch.sm()) : ordered_json(nullptr);
  j["min_driver"] = t.min_driver.empty() ? ordered_json(nullptr) : ordered_json(t.min_driver.str());
  j["max_gcc"] = t.max_gcc > 0 ? ordered_json(t.max_gcc) : ordered_json(nullptr);
  j["max_clang"] = t.max_clang > 0 ? ordered_json(t.max_clang) : ordered_json(nullptr);
  j["ptx_isa"] = t.ptx_isa.empty() ? ordered_json(nullptr) : ordered_json(t.ptx_isa.str());
  j["unconfirmed"] = strings_of(t.unconfirmed);
  j["source"] = t.source;
  return j;
}

std::vector<std::string> cuda_spans(const compat::CudnnRelease& c) {
  std::vector<std::string> spans;
  for (const auto& s : c.cuda) spans.push_back(s.first == s.last ? s.first.str() : s.first.str() + "-" + s.last.str());
  return spans;
}

std::string render_cudnn(const app::ToolkitsReport& report, Format format) {
  ordered_json all = ordered_json::array();
  Table table({"cuDNN", "min CC", "CUDA", ""});
  for (const auto& c : report.cudnn) {
    const auto spans = cuda_spans(c);
    all.push_back({{"version", c.version.str()},
                   {"cuda", spans},
                   {"min_cc", c.min_cc.dotted()},
                   {"unconfirmed", strings_of(c.unconfirmed)},
                   {"source", c.source}});
    table.add_row({c.version.str(), c.min_cc.dotted(), util::join(spans, ", "), unconfirmed_note(c.unconfirmed)});
  }
  return format == Format::json ? all.dump(2) + "\n" : table.render();
}

void add_toolkit_row(Table& table, const compat::Toolkit& t) {
  if (!t.released) {
    table.add_row({t.version.str(), "-", "-", "-", "-", "-", "never released"});
    return;
  }
  std::string notes;
  if (!t.deprecated.empty()) notes = "deprecated: " + util::join(names_of(t.deprecated, true), " ");
  if (!t.unconfirmed.empty()) notes += (notes.empty() ? "" : " ") + unconfirmed_note(t.unconfirmed);
  table.add_row({t.version.str(), t.archs.empty() ? "-" : t.archs.front().sm() + ".." + t.archs.back().sm(),
                 t.default_arch.sm(), t.min_driver.empty() ? "unknown" : t.min_driver.str(), std::to_string(t.max_gcc),
                 std::to_string(t.max_clang), notes});
}

}  // namespace

std::string render(const app::GpusReport& report, Format format) {
  if (format == Format::json) {
    if (report.lookup) return gpu_json(report.gpus.front()).dump(2) + "\n";
    ordered_json all = ordered_json::array();
    for (const auto& g : report.gpus) all.push_back(gpu_json(g));
    return all.dump(2) + "\n";
  }
  Table table = report.lookup ? Table() : Table({"GPU", "CC", "architecture", "segment", "toolkits"});
  for (const auto& row : report.gpus) {
    const auto& w = row.nvcc;
    table.add_row({std::string(row.gpu.name), row.gpu.cc.dotted(), std::string(row.gpu.architecture),
                   std::string(arch::segment_name(row.gpu.segment)),
                   "nvcc " + (w.first ? w.first->version.str() + " .. " + w.last->version.str() : "none known")});
  }
  return table.render();
}

std::string render(const app::ToolkitsReport& report, Format format) {
  if (report.cudnn_table) return render_cudnn(report, format);
  if (format == Format::json) {
    ordered_json all = ordered_json::array();
    for (const auto& t : report.toolkits) all.push_back(toolkit_json(t));
    return all.dump(2) + "\n";
  }
  Table table({"CUDA", "archs", "default", "driver", "gcc", "clang", ""});
  for (const auto& t : report.toolkits) add_toolkit_row(table, t);
  return table.render();
}

}  // namespace orc::cli
