// The image coverage report (app/inspect/coverage.hpp) as a terminal grid,
// JSON, a self-contained HTML page and Markdown.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "orchestrator/cli/coverage_sets.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/table.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

using app::CoverageCell;
using app::ImageReport;

std::string gpu_heading(const app::TargetGpu& g) {
  return g.name.empty() ? "CC " + g.cc.dotted() : g.name + " (" + g.cc.dotted() + ")";
}

std::string driver_text(const std::optional<util::Version>& d) {
  return d ? "driver " + d->str() : "no driver given: PTX judged by what each driver needs";
}

std::string summary_line(const ImageReport& r) {
  const auto& c = r.image.content;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", r.image.seconds);
  std::string line = util::printable(r.image.source);
  if (!r.image.identity.empty()) line += "  " + r.image.identity;
  if (c.layers > 0)
    line += "\n" + std::to_string(c.layers) + " layers, " + util::human_size(c.layer_bytes) + " read in " + seconds +
            " s; ";
  else
    line += "\nread in " + std::string(seconds) + " s; ";
  line += std::to_string(c.files.size()) + " files with device code or a CUDA runtime";
  return line;
}

// ANSI colours per verdict: green native, yellow jit, red none, magenta
// partial, cyan run-time.
std::string_view colour_of(const std::string& label) {
  if (label == "native") return "\x1b[32m";
  if (label == "jit") return "\x1b[33m";
  if (label == "none") return "\x1b[1;31m";
  if (label == "partial") return "\x1b[35m";
  if (label == "run-time") return "\x1b[36m";
  return "";
}

std::string pad(std::string text, std::size_t width) {
  const std::size_t w = display_width(text);
  if (w < width) text.append(width - w, ' ');
  return text;
}

// "none (driver)" when the driver, not the code, makes it none.
std::string verdict_text(const CoverageCell& c) {
  return c.cause == app::Cause::driver ? c.label() + " (driver)" : c.label();
}

std::string cell_text(const CoverageCell& c) {
  return c.decided_by.empty() ? verdict_text(c) : verdict_text(c) + " " + c.decided_by;
}

// What a cell comes down to, in a few words (the HTML cell's summary).
std::string cause_hint(const CoverageCell& c) {
  switch (c.cause) {
    case app::Cause::driver:
      return "driver too old";
    case app::Cause::missing_code:
      return c.outcome == inspect::Outcome::partial ? "some kernels lack code" : "no kernel image";
    case app::Cause::jit:
      return "JIT at first load";
    default:
      return {};
  }
}

std::string counts(const app::CoverageTier& t) {
  using inspect::Outcome;
  std::string out = std::to_string(t.count(Outcome::native)) + " native, " + std::to_string(t.count(Outcome::jit)) +
                    " jit, " + std::to_string(t.count(Outcome::none)) + " none";
  if (const auto p = t.count(Outcome::partial)) out += ", " + std::to_string(p) + " partial";
  if (const auto rt = t.count(Outcome::none, true)) out += ", " + std::to_string(rt) + " run-time";
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (char ch : util::utf8_escaped(text)) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// Names from an image land in Markdown: none may end a table cell, open a
// code span, link, emphasis, strikethrough, an entity or HTML, or start a
// list (printable() already writes a line break as \x0a). Any ASCII
// punctuation may be escaped with a backslash (CommonMark 2.4): these are
// the characters that mean something where a name stands, the backslash
// among them so that an escape stays one, and a list marker at the start.
std::string md_escape(std::string_view text) {
  const std::string shown = util::printable(text);
  const std::size_t digits = shown.find_first_not_of("0123456789");
  std::string out;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const char ch = shown[i];
    const bool marker = (i == 0 && (ch == '-' || ch == '+')) || (i == digits && i > 0 && (ch == '.' || ch == ')'));
    if (marker || std::string_view("\\`*_[]<>#|~&").find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

// `text` as a code span whatever it holds: fenced by one backtick more than
// its longest run of them, and padded with a space where it starts or ends
// with a backtick or a space (CommonMark 6.1 strips one from each side). A
// backslash is literal in a code span, but a table cell ends at every '|'
// not written \| (GFM 4.10), inside a code span too.
std::string md_code(std::string_view text, bool in_table) {
  const std::string shown = util::printable(text);
  std::string body;
  std::size_t run = 0, longest = 0;
  for (char ch : shown) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (ch == '|' && in_table) body += '\\';
    body += ch;
  }
  const bool pad =
      !body.empty() && (body.front() == '`' || body.front() == ' ' || body.back() == '`' || body.back() == ' ');
  const std::string fence(longest + 1, '`');
  return fence + (pad ? " " + body + " " : body) + fence;
}

std::string runtime_text(const app::RuntimeNeed& n) {
  std::string out = "CUDA " + std::to_string(n.major) + " runtime, needed by " + std::to_string(n.files.size()) +
                    (n.files.size() == 1 ? " file" : " files");
  if (!n.bundled.empty()) out += "; the image bundles cudart " + n.bundled;
  if (n.min_driver) out += "; drivers from " + n.min_driver->str() + " run it";
  return out;
}

// "cuBLAS 13 (libcublas.so.13): linked by /app/gemm and 2 more files".
std::string missing_text(const inspect::SetNeed& n) {
  std::string out = inspect::describe_need(n.library) + ": linked by " + n.files.front();
  if (n.files.size() > 1)
    out += " and " + std::to_string(n.files.size() - 1) + (n.files.size() == 2 ? " more file" : " more files");
  return out;
}

constexpr std::string_view k_missing_heading = "CUDA libraries its files link that the image lacks";

std::string bom_version(const inspect::Component& c) {
  if (c.source == "soname") return c.version + " (soname only)";
  return c.version;
}

}  // namespace

std::string coverage_text(const ImageReport& r, bool colour) {
  std::string out = summary_line(r) + "\n" + sets_text(r);
  for (const auto& tier : r.tiers) {
    out += "\n" + util::printable(table_title(r, tier)) + " (" + driver_text(tier.driver) + "): " + counts(tier) + "\n";
    std::size_t path_width = 7;
    for (const auto& row : tier.rows) path_width = std::max(path_width, display_width(util::printable(row.path)));
    std::vector<std::size_t> widths;
    for (std::size_t i = 0; i < tier.gpus.size(); ++i) {
      std::size_t w = display_width(gpu_heading(tier.gpus[i]));
      for (const auto& row : tier.rows) w = std::max(w, display_width(cell_text(row.cells[i])));
      widths.push_back(w);
    }
    std::string head = "  " + pad("library", path_width);
    for (std::size_t i = 0; i < tier.gpus.size(); ++i) head += "  " + pad(gpu_heading(tier.gpus[i]), widths[i]);
    while (!head.empty() && head.back() == ' ') head.pop_back();
    out += head + "\n";
    for (const auto& row : tier.rows) {
      std::string line = "  " + pad(util::printable(row.path), path_width);
      for (std::size_t i = 0; i < row.cells.size(); ++i) {
        const std::string text = pad(cell_text(row.cells[i]), widths[i]);
        const auto c = colour ? colour_of(row.cells[i].label()) : std::string_view();
        line += "  " + (c.empty() ? text : std::string(c) + text + "\x1b[0m");
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    // Why the cells that are not native are so, each reason once.
    std::vector<std::string> reasons;
    for (const auto& row : tier.rows)
      for (const auto& c : row.cells)
        if (c.outcome != inspect::Outcome::native && !c.why.empty() &&
            std::find(reasons.begin(), reasons.end(), verdict_text(c) + ": " + c.why) == reasons.end())
          reasons.push_back(verdict_text(c) + ": " + c.why);
    constexpr std::size_t k_reasons = 6;
    for (std::size_t i = 0; i < reasons.size() && i < k_reasons; ++i)
      out += "  - " + util::printable(reasons[i]) + "\n";
    if (reasons.size() > k_reasons)
      out += "  - and " + std::to_string(reasons.size() - k_reasons) +
             " more reasons (--json or --report say each cell's)\n";
  }
  if (!r.bom.empty()) {
    out += "\nCUDA components bundled:\n";
    Table t({"component", "version", "from", "device code built with", "files"});
    for (const auto& c : r.bom)
      t.add_row({c.name, util::printable(bom_version(c)), util::printable(c.source), c.built_with,
                 util::printable(util::join(c.files, " "))});
    out += t.render(2);
  }
  if (!r.runtime.empty()) {
    out += "\nCUDA runtime the image needs from the driver:\n";
    for (const auto& n : r.runtime) out += "  " + util::printable(runtime_text(n)) + "\n";
  }
  if (!r.missing.empty()) {
    out += "\n" + std::string(k_missing_heading) + ":\n";
    for (const auto& n : r.missing) out += "  " + util::printable(missing_text(n)) + "\n";
  }
  return out;
}

namespace {

// The coverage report as one JSON value: `inspect --json`'s document, and
// stamp's "coverage".
nlohmann::json coverage_value(const ImageReport& r) {
  using nlohmann::json;
  const auto s = [](std::string_view t) { return util::utf8_escaped(t); };
  json tiers = json::array();
  for (const auto& tier : r.tiers) {
    json gpus = json::array();
    for (const auto& g : tier.gpus) gpus.push_back({{"label", s(g.label)}, {"name", g.name}, {"cc", g.cc.dotted()}});
    json rows = json::array();
    for (const auto& row : tier.rows) {
      json cells = json::array();
      for (std::size_t i = 0; i < row.cells.size(); ++i) {
        const auto& c = row.cells[i];
        cells.push_back({{"gpu", s(tier.gpus[i].label)},
                         {"verdict", c.label()},
                         {"cause", app::cause_name(c.cause)},
                         {"decided_by", c.decided_by},
                         {"why", s(c.why)}});
      }
      rows.push_back({{"path", s(row.path)}, {"sass", row.sass.names()}, {"ptx", row.ptx.names()}, {"cells", cells}});
    }
    tiers.push_back({{"name", s(tier.name)},
                     {"set", tier.set ? json(s(r.sets[*tier.set].dir)) : json(nullptr)},
                     {"driver", tier.driver ? json(tier.driver->str()) : json(nullptr)},
                     {"gpus", gpus},
                     {"rows", rows}});
  }
  json bom = json::array();
  for (const auto& c : r.bom) {
    json files = json::array();
    for (const auto& f : c.files) files.push_back(s(f));
    bom.push_back({{"component", c.key},
                   {"name", c.name},
                   {"version", s(c.version)},
                   {"source", s(c.source)},
                   {"built_with", c.built_with},
                   {"files", files},
                   {"warning", c.warning},
                   {"note", c.note}});
  }
  json runtime = json::array();
  for (const auto& n : r.runtime) {
    json files = json::array();
    for (const auto& f : n.files) files.push_back(s(f));
    runtime.push_back({{"major", n.major},
                       {"bundled", s(n.bundled)},
                       {"min_driver", n.min_driver ? json(n.min_driver->str()) : json(nullptr)},
                       {"files", files}});
  }
  json missing = json::array();
  for (const auto& n : r.missing) {
    json files = json::array();
    for (const auto& f : n.files) files.push_back(s(f));
    missing.push_back({{"library", n.library.library->key},
                       {"name", n.library.library->name},
                       {"major", n.library.major ? json(*n.library.major) : json(nullptr)},
                       {"soname", s(n.library.soname)},
                       {"files", files}});
  }
  json hidden = json::array(), warnings = json::array(), damaged = json::array();
  for (const auto& h : r.image.content.hidden) hidden.push_back(s(h));
  for (const auto& w : r.warnings) warnings.push_back(s(w));
  for (const auto& d : r.damaged) damaged.push_back(s(d));
  const json doc = {{"source", s(r.image.source)},
                    {"identity", r.image.identity},
                    {"layers", r.image.content.layers},
                    {"layer_bytes", r.image.content.layer_bytes},
                    {"seconds", r.image.seconds},
                    {"judged", r.sets.empty() ? "every-tier" : "per-set"},
                    {"sets", sets_json(r)},
                    {"tiers", tiers},
                    {"bom", bom},
                    {"runtime", runtime},
                    {"missing", missing},
                    {"hidden", hidden},
                    {"warnings", warnings},
                    {"damaged", damaged},
                    {"exit_code", static_cast<int>(r.exit_code)}};
  return doc;
}

}  // namespace

std::string coverage_json(const ImageReport& r) { return coverage_value(r).dump(2) + "\n"; }

std::string coverage_html(const ImageReport& r) {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>GPU coverage: " +
       html_escape(r.image.source) + "</title>\n";
  // Everything inline: the page is read offline, attached to a ticket.
  h += R"(<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1f24;background:#fff}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 6px}
.meta{color:#57606a;margin:0 0 12px} code{font:12px ui-monospace,monospace}
table{border-collapse:collapse;margin:6px 0 4px} th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top}
thead th{background:#f6f8fa;text-align:center}
th.lib{text-align:left;font-weight:normal;max-width:520px;word-break:break-all}
th.lib small{color:#57606a}
td.cell{text-align:center;min-width:88px;font-weight:600}
td.cell small{display:block;font-weight:normal}
td.cell summary{cursor:pointer}
td.cell .why{font-weight:normal;font-size:11px;max-width:320px;text-align:left;color:#24292f;margin-top:4px;overflow-wrap:anywhere}
.v-native{background:#b7ebc6}.v-jit{background:#fbe29a}.v-none{background:#f7a8a8}
.v-partial{background:#e3c2f3}.v-run-time{background:#b9e3f4}.v-link,.v-no-kernels{background:#e6e6e6}
.c-driver{background:#f9c98f}
.legend span{display:inline-block;padding:2px 8px;margin:0 6px 4px 0;border:1px solid #d0d7de}
ul.warn li{color:#9a6700}
</style></head><body>
)";
  h += "<h1>Will it run? GPU coverage of <code>" + html_escape(r.image.source) + "</code></h1>\n";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", r.image.seconds);
  h += "<p class=\"meta\">" +
       (r.image.identity.empty() ? std::string() : "<code>" + html_escape(r.image.identity) + "</code> &middot; ");
  if (r.image.content.layers > 0)
    h += std::to_string(r.image.content.layers) + " layers, " + util::human_size(r.image.content.layer_bytes) +
         " read in " + seconds + " s &middot; ";
  h += std::to_string(r.image.content.files.size()) + " files with device code or a CUDA runtime</p>\n";
  // The causes apart: the code the GPU loads, the JIT, the driver, code missing.
  h += "<p class=\"legend\"><span class=\"v-native\" data-cause=\"runs\">native: a cubin the GPU loads</span>"
       "<span class=\"v-jit\" data-cause=\"jit\">jit: only PTX, which the driver compiles at first load (JIT)</span>"
       "<span class=\"v-none c-driver\" data-cause=\"driver\">none (driver): the code is there, but the driver is "
       "too old for its PTX (error 222) or its CUDA runtime (error 35): a newer driver runs it</span>"
       "<span class=\"v-none\" data-cause=\"missing-code\">none: no kernel image for this GPU (error 209): the "
       "file lacks its SASS and PTX</span>"
       "<span class=\"v-partial\" data-cause=\"missing-code\">partial: some kernels lack code for this GPU</span>"
       "<span class=\"v-run-time\" data-cause=\"other\">run-time: the library builds its kernels when it runs</span>"
       "<br>Click a cell for the whole reason.</p>\n";
  if (!r.sets.empty()) {
    h += "<h2>" + std::to_string(r.sets.size()) + (r.sets.size() == 1 ? " fetched set, " : " fetched sets, ") +
         html_escape(k_per_set) +
         "</h2>\n<table class=\"sets\"><thead><tr><th>set</th><th>recipe</th>"
         "<th>manifest</th><th>result</th><th>judged against</th></tr></thead><tbody>\n";
    for (std::size_t i = 0; i < r.sets.size(); ++i) {
      const auto& set = r.sets[i];
      std::string against = html_escape(tier_from_text(r, set));
      if (!set.added_since.empty())
        against += "<br><small>" + html_escape(set.judged->name) +
                   " in the configuration has GPUs the set was not built for: " +
                   html_escape(util::join(set.added_since, ", ")) + "</small>";
      h += "<tr data-set=\"" + html_escape(set.dir) + "\"><td><code>" + html_escape(set.dir) + "</code></td><td>" +
           html_escape(set.recipe) + "</td><td><code>" + html_escape(set_manifest(set)) + "</code></td><td>" +
           html_escape(set_result(r, i)) + "</td><td>" + against + "</td></tr>\n";
    }
    h += "</tbody></table>\n";
  }
  for (const auto& tier : r.tiers) {
    h += "<h2>" + html_escape(table_title(r, tier)) + " <small>(" + html_escape(driver_text(tier.driver)) +
         "): " + counts(tier) + "</small></h2>\n";
    h += "<table class=\"grid\" data-tier=\"" + html_escape(tier.name) + "\"" +
         (tier.set ? " data-set=\"" + html_escape(r.sets[*tier.set].dir) + "\"" : std::string()) +
         "><thead><tr><th>library</th>";
    for (const auto& g : tier.gpus) h += "<th>" + html_escape(gpu_heading(g)) + "</th>";
    h += "</tr></thead><tbody>\n";
    for (const auto& row : tier.rows) {
      h += "<tr><th class=\"lib\">" + html_escape(row.path) + "<br><small>" + html_escape(row.sass.joined(" ", "")) +
           (row.ptx.empty() ? "" : " &middot; " + html_escape(row.ptx.joined(" "))) + "</small></th>";
      // The whole reason, shown on a click on the cell (<details>: no script).
      for (const auto& c : row.cells) {
        const std::string label = c.label();
        const std::string cause(app::cause_name(c.cause));
        const std::string hint = c.decided_by.empty() ? cause_hint(c) : c.decided_by;
        const std::string summary = label + (hint.empty() ? "" : "<small>" + html_escape(hint) + "</small>");
        h += "<td class=\"cell v-" + label + " c-" + cause + "\" data-verdict=\"" + label + "\" data-cause=\"" + cause +
             "\" title=\"" + html_escape(c.why) + "\">" +
             (c.why.empty() ? summary
                            : "<details><summary>" + summary + "</summary><div class=\"why\">" + html_escape(c.why) +
                                  "</div></details>") +
             "</td>";
      }
      h += "</tr>\n";
    }
    h += "</tbody></table>\n";
  }
  if (!r.bom.empty()) {
    h += "<h2>CUDA components bundled</h2>\n<table class=\"bom\"><thead><tr><th>component</th><th>version</th>"
         "<th>from</th><th>device code built with</th><th>files</th></tr></thead><tbody>\n";
    for (const auto& c : r.bom) {
      h += "<tr><td>" + html_escape(c.name) + "</td><td>" + html_escape(bom_version(c)) + "</td><td>" +
           html_escape(c.source) + "</td><td>" + html_escape(c.built_with) + "</td><td><code>" +
           html_escape(util::join(c.files, " ")) + "</code></td></tr>\n";
    }
    h += "</tbody></table>\n";
  }
  if (!r.runtime.empty()) {
    h += "<h2>CUDA runtime the image needs from the driver</h2>\n<ul>";
    for (const auto& n : r.runtime) h += "<li>" + html_escape(runtime_text(n)) + "</li>";
    h += "</ul>\n";
  }
  if (!r.missing.empty()) {
    h += "<h2>" + std::string(k_missing_heading) + "</h2>\n<ul>";
    for (const auto& n : r.missing) h += "<li>" + html_escape(missing_text(n)) + "</li>";
    h += "</ul>\n";
  }
  if (!r.warnings.empty() || !r.damaged.empty()) {
    h += "<h2>Warnings</h2>\n<ul class=\"warn\">";
    for (const auto& w : r.damaged) h += "<li>" + html_escape(w) + "</li>";
    for (const auto& w : r.warnings) h += "<li>" + html_escape(w) + "</li>";
    h += "</ul>\n";
  }
  h += "<p class=\"meta\">Made by orchestrate inspect. Verdicts follow the CUDA compatibility rules the tool's "
       "tables hold (SASS loads on its major at the same or a later minor; PTX is compiled for the same or a later "
       "GPU by a driver that knows its ISA).</p>\n</body></html>\n";
  return h;
}

std::string coverage_markdown(const ImageReport& r) {
  std::string m = "### GPU coverage of " + md_code(r.image.source, false) + "\n\n";
  m += summary_line(r).substr(summary_line(r).find('\n') + 1) + "\n";
  static const std::map<std::string, std::string> mark = {
      {"native", "🟢"}, {"jit", "🟡"}, {"none", "🔴"}, {"partial", "🟣"}, {"run-time", "🔵"}};
  m += "\n🟢 native · 🟡 jit: only PTX, compiled at first load · 🟠 none (driver): the driver is too old for "
       "the "
       "code · 🔴 none: no kernel image for the GPU · 🟣 partial · 🔵 run-time: the library builds its "
       "kernels\n";
  if (!r.sets.empty()) {
    m += "\n#### " + std::to_string(r.sets.size()) + (r.sets.size() == 1 ? " fetched set, " : " fetched sets, ") +
         md_escape(k_per_set) + "\n\n| set | recipe | manifest | result | judged against |\n|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < r.sets.size(); ++i) {
      const auto& set = r.sets[i];
      m += "| " + md_code(set.dir, true) + " | " + md_escape(set.recipe) + " | " + md_code(set_manifest(set), true) +
           " | " + set_result(r, i) + " | " + md_escape(tier_from_text(r, set)) + " |\n";
    }
  }
  for (const auto& tier : r.tiers) {
    m += "\n#### " + md_escape(table_title(r, tier)) + " (" + md_escape(driver_text(tier.driver)) +
         "): " + counts(tier) + "\n\n";
    m += "| library |";
    for (const auto& g : tier.gpus) m += " " + md_escape(gpu_heading(g)) + " |";
    m += "\n|---|";
    for (std::size_t i = 0; i < tier.gpus.size(); ++i) m += "---|";
    m += "\n";
    std::vector<std::string> notes;
    for (const auto& row : tier.rows) {
      m += "| " + md_code(row.path, true) + " |";
      for (std::size_t i = 0; i < row.cells.size(); ++i) {
        const auto& c = row.cells[i];
        const auto it = c.cause == app::Cause::driver ? mark.end() : mark.find(c.label());
        const std::string sign = c.cause == app::Cause::driver ? "🟠 " : it == mark.end() ? "" : it->second + " ";
        m += " " + sign + cell_text(c) + " |";
        if (c.label() != "native")
          notes.push_back(md_code(row.path, false) + " on " + md_escape(gpu_heading(tier.gpus[i])) + ": " +
                          md_escape(verdict_text(c)) + ": " + md_escape(c.why));
      }
      m += "\n";
    }
    if (!notes.empty()) {
      m += "\n<details><summary>why (cells other than native)</summary>\n\n";
      for (const auto& n : notes) m += "- " + n + "\n";
      m += "\n</details>\n";
    }
  }
  if (!r.bom.empty()) {
    m += "\n#### CUDA components bundled\n\n| component | version | from | device code built with "
         "|\n|---|---|---|---|\n";
    for (const auto& c : r.bom)
      m += "| " + md_escape(c.name) + " | " + md_escape(bom_version(c)) + " | " + md_escape(c.source) + " | " +
           md_escape(c.built_with) + " |\n";
  }
  if (!r.runtime.empty()) {
    m += "\n#### CUDA runtime the image needs from the driver\n\n";
    for (const auto& n : r.runtime) m += "- " + md_escape(runtime_text(n)) + "\n";
  }
  if (!r.missing.empty()) {
    m += "\n#### " + std::string(k_missing_heading) + "\n\n";
    for (const auto& n : r.missing) m += "- " + md_escape(missing_text(n)) + "\n";
  }
  if (!r.warnings.empty() || !r.damaged.empty()) {
    m += "\n#### Warnings\n\n";
    for (const auto& w : r.damaged) m += "- " + md_escape(w) + "\n";
    for (const auto& w : r.warnings) m += "- " + md_escape(w) + "\n";
  }
  return m;
}

std::string stamp_json(const app::StampReport& r) {
  nlohmann::json doc = coverage_value(r.coverage);
  nlohmann::json unbounded = nlohmann::json::array();
  for (const auto& u : r.values.unbounded) unbounded.push_back(util::utf8_escaped(u));
  nlohmann::json refused = nlohmann::json::array();
  for (const auto& g : r.values.refused_gpus) refused.push_back(util::utf8_escaped(g));
  nlohmann::json removed = nlohmann::json::array();
  for (const auto& e : r.removed) removed.push_back(util::utf8_escaped(e));
  nlohmann::json out = {
      {"coverage", doc},
      {"stamped", r.stamped_ok ? nlohmann::json(util::utf8_escaped(r.stamped)) : nlohmann::json()},
      {"identity", r.identity},
      {"NVIDIA_REQUIRE_CUDA", r.values.require_cuda},
      {"NVIDIA_REQUIRE_ARCH", r.values.require_arch},
      {"unbounded", unbounded},
      {"refused_gpus", refused},
      {"removed", removed}};
  if (r.from_recipe) {
    out["set"] = r.from_recipe->set.to_string();
    out["newer_set"] = r.from_recipe->newer ? nlohmann::json(r.from_recipe->newer->to_string()) : nlohmann::json();
  }
  return out.dump(2) + "\n";
}

void emit(Io& io, const ImageReport& report, Format format, bool colour) {
  if (format == Format::json) {
    io.out << coverage_json(report);
  } else {
    io.out << coverage_text(report, colour);
    for (const auto& w : report.warnings)
      io.err << util::Diagnostic{.severity = util::Severity::warning, .message = util::printable(w)}.render();
  }
  for (const auto& d : report.damaged) io.err << util::Diagnostic{.message = util::printable(d)}.render();
  io.exit_code = report.exit_code;
}

}  // namespace orc::cli
