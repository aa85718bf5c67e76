// `orchestrate plan`, rendered from the typed plan: a table per run (tier
// headings, one row per recipe, its image, variables and reasons beneath),
// or --json.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/table.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

using Json = nlohmann::ordered_json;

template <typename T, typename Text>
Json or_null(const T* value, Text text) {
  return value ? Json(text(*value)) : Json(nullptr);
}

std::string version_of_toolkit(const compat::Toolkit& t) { return t.version.str(); }
std::string version_of_cudnn(const compat::CudnnRelease& c) { return c.version.str(); }

Json host_json(const app::PlanEntry& e) {
  if (!e.host) return Json(nullptr);
  Json j;
  j["toolkit"] = e.host->toolkit.version.str();
  j["root"] = e.host->toolkit.root.string();
  j["instead_of"] = or_null(e.host->instead_of, version_of_toolkit);
  return j;
}

std::string build_command(const compat::OfflineImage& image) {
  return "orchestrate images build " + std::string(image.name);
}

Json plan_json(const app::PlanEntry& e) {
  Json j;
  j["recipe"] = e.recipe->name;
  j["framework"] = recipe::framework_name(e.recipe->framework);
  j["tier"] = e.tier->name;
  j["status"] = e.ok ? "ok" : "unsatisfiable";
  j["gpus"] = Json::array();
  for (const auto& g : e.tier->gpus) j["gpus"].push_back({{"name", g.name}, {"cc", g.cc.dotted()}});
  j["ptx_policy"] = recipe::ptx_policy_name(e.tier->ptx);
  j["toolkit"] = or_null(e.toolkit, version_of_toolkit);
  j["cudnn"] = or_null(e.cudnn, version_of_cudnn);
  j["image"] = or_null(app::shown_image(e), [](const compat::ImageChoice& i) { return i.reference; });
  // Offline images only: built here (a record of `images build`), and the
  // command that builds one that is not.
  const bool offline = app::shown_image(e) && app::shown_image(e)->source != compat::ImageSource::official;
  j["image_built"] = offline ? Json(e.image_to_build == nullptr) : Json(nullptr);
  j["image_build"] = e.image_to_build ? Json(build_command(*e.image_to_build)) : Json(nullptr);
  j["host"] = host_json(e);
  j["sass"] = e.archs.sass_names();
  j["ptx"] = e.archs.ptx_names();
  j["env"] = Json::object();
  if (e.ok)
    for (const auto& v : e.framework.env) j["env"][v.name] = v.value;
  j["nvcc_flags"] = flags::nvcc_gencode(e.archs);
  j["reasons"] = e.reasons;
  j["warnings"] = e.warnings;
  j["notes"] = e.notes;
  if (!e.ok) {
    j["split"] = Json::array();
    for (const auto& part : e.split)
      j["split"].push_back({{"gpus", part.gpus}, {"toolkit", or_null(part.toolkit, version_of_toolkit)}});
  }
  return j;
}

std::string plan_json(const app::PlanReport& report) {
  Json plans = Json::array();
  for (const auto& e : report.plans) plans.push_back(plan_json(e));
  Json root;
  root["plans"] = std::move(plans);
  // The configuration's own warnings, as stderr shows them (file:line: text).
  root["warnings"] = Json::array();
  for (const auto& w : report.config_warnings)
    root["warnings"].push_back({{"file", w.where.file.empty() ? Json(nullptr) : Json(w.where.file)},
                                {"line", w.where.line ? Json(w.where.line) : Json(nullptr)},
                                {"column", w.where.col ? Json(w.where.col) : Json(nullptr)},
                                {"message", w.message}});
  return root.dump(2) + "\n";
}

const std::string k_detail(4, ' ');  // where the lines under a plan's row start

// `text` wrapped at output_width() with a hanging indent, as notes of `table`.
void add_wrapped(Table& table, const std::string& text, const std::string& first, const std::string& rest) {
  for (auto& line : wrap_hanging(text, first, rest, output_width())) table.add_note(std::move(line));
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

void add_tier_heading(Table& table, const recipe::Tier& tier) {
  std::vector<std::string> gpus;
  for (const auto& g : tier.gpus) gpus.push_back(g.given_as_cc ? "CC " + g.cc.dotted() : g.name + " " + g.cc.dotted());
  add_wrapped(table,
              "tier " + tier.name + ": " + util::join(gpus, ", ") +
                  " (ptx: " + std::string(recipe::ptx_policy_name(tier.ptx)) + ")",
              "", k_detail);
}

// One plan's row (name and framework, toolkit, cuDNN when any plan has
// one, the arch set) and the lines beneath it: image, host toolkit, the
// framework's variables and, with `explain`, the reasons.
void add_plan(Table& table, const app::PlanEntry& e, bool cudnn_column, bool explain) {
  std::vector<std::string> row{"  " + e.recipe->name + " [" + std::string(recipe::framework_name(e.recipe->framework)) +
                               "]"};
  if (!e.ok) {
    row.push_back("UNSATISFIABLE");
    row.resize(cudnn_column ? 4 : 3);  // the table's columns, whichever row comes first
    table.add_row(std::move(row));
    for (const auto& r : e.reasons) add_wrapped(table, r, k_detail + "- ", k_detail + "  ");
    return;
  }
  const auto ptx = e.archs.ptx_names();
  row.push_back("CUDA " + e.toolkit->version.str());
  if (cudnn_column) row.push_back(e.cudnn ? "cuDNN " + e.cudnn->version.str() : "");
  row.push_back("SASS " + util::join(e.archs.sass_names(), " ") + "; PTX " +
                (ptx.empty() ? std::string("none") : util::join(ptx, " ")));
  table.add_row(std::move(row));
  if (const auto* image = app::shown_image(e))
    add_wrapped(
        table,
        image->reference + (e.image_to_build ? " (not built here: " + build_command(*e.image_to_build) + ")" : ""),
        k_detail + "image: ", k_detail + "  ");
  if (e.host)
    table.add_note(k_detail + "host toolkit: " + e.host->toolkit.version.str() + " (" + e.host->toolkit.root.string() +
                   ")");
  for (const auto& v : e.framework.env) add_wrapped(table, v.name + "=" + v.value, k_detail, k_detail + "  ");
  for (const auto& n : e.notes) add_wrapped(table, n, k_detail + "note: ", k_detail + "  ");
  if (explain)
    for (const auto& r : e.reasons) add_wrapped(table, r, k_detail + "because: ", k_detail + "  ");
}

std::string plan_text(const app::PlanReport& report, bool explain) {
  if (report.plans.empty()) return "no recipe x tier to plan\n";
  const bool cudnn_column = std::ranges::any_of(report.plans, [](const auto& e) { return e.ok && e.cudnn; });
  Table table;
  const recipe::Tier* current = nullptr;
  for (const auto& e : report.plans) {
    if (e.tier != current) {
      if (current) table.add_note("");
      current = e.tier;
      add_tier_heading(table, *e.tier);
    }
    add_plan(table, e, cudnn_column, explain);
  }
  std::string out = table.render();
  // Each warning once, with the plans it concerns.
  const auto warnings = report.grouped_warnings();
  if (!warnings.empty()) out += '\n';
  for (const auto& w : warnings) {
    out += joined(wrap_hanging(w.text, "warning: ", k_detail, output_width()));
    out += joined(wrap_hanging(util::join(w.plans, ", "), k_detail + "for ", k_detail + k_detail, output_width()));
  }
  return out;
}

}  // namespace

std::string render(const app::PlanReport& report, Format format, bool explain) {
  return format == Format::json ? plan_json(report) : plan_text(report, explain);
}

void emit(Io& io, const app::PlanReport& report, Format format, bool explain) {
  for (const auto& w : report.config_warnings) io.err << w.render();
  io.out << render(report, format, explain);
  io.exit_code = report.exit_code();
}

}  // namespace orc::cli
