// The build report rendered: JSON on stdout, text on stdout, and each
// build's errors as the one error format on stderr.
#include <nlohmann/json.hpp>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/library_needs.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

using namespace app;

using Json = nlohmann::ordered_json;

// Names (artifacts, and the messages that quote them) are bytes: JSON gets
// them through util::utf8_escaped, a terminal through util::printable.
std::vector<std::string> escaped_all(const std::vector<std::string>& texts, std::string (*escape)(std::string_view)) {
  std::vector<std::string> out;
  for (const auto& t : texts) out.push_back(escape(t));
  return out;
}

// A message of several lines (a failed step's log tail), each line printable.
std::string printable_lines(std::string_view text) {
  std::string out;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find('\n', start);
    out += util::printable(text.substr(start, end - start));
    if (end == std::string_view::npos) return out;
    out += '\n';
    start = end + 1;
  }
}

Json targets_json(const front::Targets& t) {
  Json lto = Json::array();
  for (const auto& cc : t.lto) lto.push_back(cc.lto());
  return {{"sass", t.code.sass_names()}, {"ptx", t.code.ptx_names()}, {"lto", std::move(lto)}};
}

// Every nvcc call and GPU probe the front recorded, as the report's JSON.
Json nvcc_json(const NvccReport& n) {
  using util::utf8_escaped;
  Json calls = Json::array();
  for (const auto& c : n.calls) {
    Json j;
    j["tool"] = c.tool;
    j["outcome"] = front::outcome_name(c.outcome);
    j["kind"] = front::call_kind_name(c.kind);
    j["choice"] = front::arch_choice_name(c.choice);
    j["sources"] = escaped_all(c.sources, utf8_escaped);
    j["output"] = utf8_escaped(c.output);
    j["asked"] = targets_json(c.asked);
    j["compiled"] = c.compiled ? targets_json(*c.compiled) : Json(nullptr);
    j["arch_flags"] = escaped_all(c.arch_flags, utf8_escaped);
    j["origin"] = c.origin ? Json{{"file", utf8_escaped(c.origin->file)},
                                  {"line", c.origin->line},
                                  {"text", utf8_escaped(c.origin->text)}}
                           : Json(nullptr);
    j["note"] = utf8_escaped(c.note);
    j["exit_code"] = c.exit_code ? Json(*c.exit_code) : Json(nullptr);
    calls.push_back(std::move(j));
  }
  return {{"policy", front::policy_name(n.policy)}, {"bypassed", n.bypassed}, {"calls", std::move(calls)}};
}

const char* status_name(BuildStatus status) {
  return status == BuildStatus::built ? "built" : status == BuildStatus::cached ? "cached" : "failed";
}

// A library a set needs, typed: its key, name, the major a node needs, the soname.
Json needs_json(const std::vector<cache::LibraryNeed>& needs) {
  Json list = Json::array();
  for (const auto& n : needs)
    list.push_back({{"library", util::utf8_escaped(n.library)},
                    {"major", n.major ? Json(*n.major) : Json(nullptr)},
                    {"soname", util::utf8_escaped(n.soname)},
                    {"name", site::library_name(n).empty() ? Json(nullptr) : Json(site::library_name(n))}});
  return list;
}

Json build_json(const BuildResult& b) {
  using util::utf8_escaped;
  Json j;
  j["recipe"] = b.recipe;
  j["tier"] = b.tier;
  j["status"] = status_name(b.status);
  j["key"] = b.key.empty() ? Json(nullptr) : Json(b.key);
  j["toolkit"] = b.toolkit ? Json(b.toolkit->str()) : Json(nullptr);
  j["image"] = b.image ? Json(utf8_escaped(*b.image)) : Json(nullptr);
  j["engine"] = engine::to_string(b.engine);
  j["artifacts"] = Json::array();
  for (const auto& a : b.artifacts)
    j["artifacts"].push_back({{"path", utf8_escaped(a.path)},
                              {"name", utf8_escaped(a.name)},
                              {"sha256", a.sha256},
                              {"sass", a.sass.names()},
                              {"ptx", a.ptx.names()},
                              {"needs", needs_json(a.needs)}});
  j["manifest"] = b.manifest ? Json(b.manifest->to_string()) : Json(nullptr);
  j["kept_tree"] = b.kept_tree.empty() ? Json(nullptr) : Json(utf8_escaped(b.kept_tree));
  // The image this build made (image: REPO), beside "image", the one it built in.
  j["image_made"] = b.image_made.empty() ? Json(nullptr) : Json(utf8_escaped(b.image_made));
  j["image_env"] = b.image_env;
  j["nvcc"] = b.nvcc ? nvcc_json(*b.nvcc) : Json(nullptr);
  if (!b.errors.empty()) j["errors"] = escaped_all(b.errors, utf8_escaped);
  if (!b.warnings.empty()) j["warnings"] = escaped_all(b.warnings, utf8_escaped);
  return j;
}

// "with CUDA 13.0.88 in orchestrate/cuda:host-bookworm (docker)".
std::string built_with(const BuildResult& b) {
  if (!b.toolkit) return {};
  return " with CUDA " + b.toolkit->str() + " in " + util::printable(b.image.value_or("no image")) + " (" +
         std::string(engine::to_string(b.engine)) + ")";
}

}  // namespace

std::string render_build_json(const app::BuildReport& report) {
  Json builds = Json::array();
  for (const auto& b : report.builds) builds.push_back(build_json(b));
  Json root;
  root["builds"] = std::move(builds);
  // The run's warnings (stderr said each once), with the builds they concern.
  root["warnings"] = Json::array();
  for (const auto& w : report.warnings)
    root["warnings"].push_back({{"message", util::utf8_escaped(w.text)}, {"builds", w.builds}});
  // The net under utf8_escaped: a string missed costs a U+FFFD, not the report.
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string render_build_text(const app::BuildReport& report, bool explain) {
  std::string out;
  for (const auto& b : report.builds) {
    out += b.recipe + " x " + b.tier + ": " + (b.status == BuildStatus::failed ? "FAILED" : status_name(b.status));
    if (!b.key.empty()) out += " (key " + b.key.substr(0, 16) + ")";
    out += built_with(b) + '\n';
    if (explain && !b.explain.empty())
      for (const auto& line : util::split_any(b.explain, "\n")) out += "    " + line + '\n';
    for (const auto& a : b.artifacts) {
      out += "    " + util::printable(a.name) + "  sha256:" + a.sha256.substr(0, 16) + "  SASS " + a.sass.joined(" ") +
             "  PTX " + a.ptx.joined(" ") + '\n';
      // What the nodes must provide: the set does not carry it.
      for (const auto& n : a.needs) out += "      needs " + util::printable(site::describe(n)) + ", not in the set\n";
    }
    if (b.nvcc)
      for (const auto& line : nvcc_summary(*b.nvcc)) out += "    " + util::printable(line) + '\n';
    for (const auto& w : escaped_all(b.warnings, util::printable)) out += "    warning: " + w + '\n';
    if (!b.kept_tree.empty()) out += "    build tree kept at " + util::printable(b.kept_tree) + '\n';
    if (!b.image_made.empty()) out += "    image " + util::printable(b.image_made) + '\n';
    for (const auto& e : b.image_env) out += "      " + e + '\n';
  }
  return out;
}

std::string render_build_errors(const app::BuildReport& report) {
  std::string out;
  for (const auto& b : report.builds)
    for (const auto& e : b.errors)
      out += util::Diagnostic{.message = b.recipe + " x " + b.tier + ": " + printable_lines(e)}.render();
  return out;
}

}  // namespace orc::cli
