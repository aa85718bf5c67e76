#include "orchestrator/front/front.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "orchestrator/flags/emit.hpp"

namespace orc::front {

namespace {

using arch::ComputeCapability;
using nlohmann::json;

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

std::string plan_text(const arch::ArchSet& plan) {
  auto names = plan.sass_names();
  for (auto& p : plan.ptx_names()) names.push_back(std::move(p));
  return join_names(names);
}

json targets_json(const Targets& t) {
  return {{"sass", t.code.sass_names()}, {"ptx", t.code.ptx_names()}, {"lto", [&t] {
                                                                         std::vector<std::string> v;
                                                                         for (const auto& cc : t.lto)
                                                                           v.push_back(cc.lto());
                                                                         return v;
                                                                       }()}};
}

Targets targets_from(const json& j) {
  Targets t;
  const auto each = [&j](const char* key, auto&& add) {
    if (!j.contains(key) || !j[key].is_array()) return;
    for (const auto& v : j[key])
      if (v.is_string())
        if (auto cc = ComputeCapability::parse(v.get<std::string>())) add(*cc);
  };
  each("sass", [&t](ComputeCapability cc) { t.code.sass.insert(cc); });
  each("ptx", [&t](ComputeCapability cc) { t.code.ptx.insert(cc); });
  each("lto", [&t](ComputeCapability cc) { t.lto.insert(cc); });
  return t;
}

template <typename E, std::size_t N>
std::optional<E> by_name(std::string_view name, const std::array<E, N>& all, std::string_view (*to_name)(E)) {
  for (E e : all)
    if (to_name(e) == name) return e;
  return std::nullopt;
}

constexpr std::array k_kinds = {CallKind::compile,   CallKind::device_link, CallKind::link, CallKind::single_target,
                                CallKind::host_only, CallKind::preprocess,  CallKind::query};
constexpr std::array k_choices = {ArchChoice::listed, ArchChoice::nvcc_default, ArchChoice::native, ArchChoice::all,
                                  ArchChoice::all_major};
constexpr std::array k_outcomes = {Outcome::as_planned, Outcome::refused, Outcome::enforced, Outcome::not_judged,
                                   Outcome::probe};

// The plan's targets match when SASS and PTX are exactly the plan's; LTO-IR
// (compiled now, linked to SASS later) counts for an arch the plan names.
bool matches(const Targets& asked, const arch::ArchSet& plan) {
  if (asked.lto.empty()) return asked.code == plan;
  const auto planned = plan.all();
  const bool lto_ok = std::ranges::all_of(asked.lto, [&](const auto& cc) { return planned.contains(cc); });
  const bool code_ok = std::ranges::all_of(asked.code.sass, [&](const auto& cc) { return plan.sass.contains(cc); }) &&
                       std::ranges::all_of(asked.code.ptx, [&](const auto& cc) { return plan.ptx.contains(cc); });
  return lto_ok && code_ok;
}

std::string difference(const Targets& asked, const arch::ArchSet& plan) {
  std::vector<std::string> missing, extra;
  for (const auto& cc : plan.sass)
    if (!asked.code.sass.contains(cc) && !asked.lto.contains(cc)) missing.push_back(cc.sm());
  for (const auto& cc : plan.ptx)
    if (!asked.code.ptx.contains(cc) && !asked.lto.contains(cc)) missing.push_back(cc.compute());
  for (const auto& cc : asked.code.sass)
    if (!plan.sass.contains(cc)) extra.push_back(cc.sm());
  for (const auto& cc : asked.code.ptx)
    if (!plan.ptx.contains(cc)) extra.push_back(cc.compute());
  std::string out;
  if (!missing.empty()) out += "missing " + join_names(missing);
  if (!extra.empty()) out += (out.empty() ? "" : "; ") + std::string("not planned ") + join_names(extra);
  return out;
}

// The sources as the project names them: relative to its root when under it.
std::string what_was_compiled(const NvccCall& call, const std::filesystem::path& root) {
  const std::string prefix = root.string() + "/";
  std::vector<std::string> shown;
  for (const auto& s : call.sources) shown.push_back(s.starts_with(prefix) ? s.substr(prefix.size()) : s);
  if (!shown.empty()) return join_names(shown);
  if (!call.output.empty()) return call.output;
  return std::string(call_kind_name(call.kind));
}

// Why the call asked what it asked, in words.
std::string how_asked(const NvccCall& call, const FrontConfig& config) {
  switch (call.choice) {
    case ArchChoice::listed: {
      // A CMake list gives one option per arch: the first few say enough.
      constexpr std::size_t k_shown = 3;
      std::vector<std::string> shown(call.arch_flags.begin(),
                                     call.arch_flags.begin() + std::min(call.arch_flags.size(), k_shown));
      std::string more = call.arch_flags.size() > k_shown
                             ? " and " + std::to_string(call.arch_flags.size() - k_shown) + " more"
                             : std::string();
      return "its arch options (" + join_names(shown) + more + ")";
    }
    case ArchChoice::nvcc_default:
      return "no arch option at all, so nvcc's default (" + config.default_arch.sm() + ")";
    case ArchChoice::native:
      return "-arch=native: the GPUs of the machine that builds it";
    case ArchChoice::all:
      return "-arch=all: every arch this nvcc knows";
    case ArchChoice::all_major:
      return "-arch=all-major: every major arch this nvcc knows";
  }
  return "its arch options";
}

std::string probe_words(const CallRecord& p) {
  std::string out = p.tool;
  if (p.origin) out += " (" + p.origin->file + ":" + std::to_string(p.origin->line) + ")";
  out += " " + p.note;
  return out;
}

}  // namespace

std::string_view policy_name(Policy p) { return p == Policy::enforce ? "enforce" : "verify"; }
std::optional<Policy> parse_policy(std::string_view text) {
  if (text == "verify") return Policy::verify;
  if (text == "enforce") return Policy::enforce;
  return std::nullopt;
}

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::as_planned:
      return "as-planned";
    case Outcome::refused:
      return "refused";
    case Outcome::enforced:
      return "enforced";
    case Outcome::not_judged:
      return "not-judged";
    case Outcome::probe:
      return "gpu-probe";
  }
  return "not-judged";
}

std::string render_config(const FrontConfig& c) {
  std::string out;
  out += "real_nvcc=" + c.real_nvcc.string() + "\n";
  out += "plan=" + plan_text(c.plan) + "\n";
  out += "default_arch=" + c.default_arch.sm() + "\n";
  out += "policy=" + std::string(policy_name(c.policy)) + "\n";
  out += "tier=" + c.tier + "\n";
  out += "recipe=" + c.recipe + "\n";
  out += "recipe_where=" + c.recipe_where + "\n";
  out += "source=" + c.source.string() + "\n";
  out += "log=" + c.log.string() + "\n";
  return out;
}

std::expected<FrontConfig, std::string> parse_config(std::string_view text) {
  FrontConfig c;
  bool have_nvcc = false, have_plan = false;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) return std::unexpected("line " + std::to_string(number) + ": no '='");
    const std::string_view key = line.substr(0, eq);
    const std::string value(line.substr(eq + 1));
    if (key == "real_nvcc") {
      c.real_nvcc = value;
      have_nvcc = true;
    } else if (key == "plan") {
      have_plan = true;
      for (const auto& name : split_flags(value)) {
        auto cc = ComputeCapability::parse(name);
        if (!cc) return std::unexpected("line " + std::to_string(number) + ": " + cc.error());
        (name.starts_with("compute_") ? c.plan.ptx : c.plan.sass).insert(*cc);
      }
    } else if (key == "default_arch") {
      auto cc = ComputeCapability::parse(value);
      if (!cc) return std::unexpected("line " + std::to_string(number) + ": " + cc.error());
      c.default_arch = *cc;
    } else if (key == "policy") {
      auto p = parse_policy(value);
      if (!p) return std::unexpected("line " + std::to_string(number) + ": policy is verify or enforce");
      c.policy = *p;
    } else if (key == "tier") {
      c.tier = value;
    } else if (key == "recipe") {
      c.recipe = value;
    } else if (key == "recipe_where") {
      c.recipe_where = value;
    } else if (key == "source") {
      c.source = value;
    } else if (key == "log") {
      c.log = value;
    }
  }
  if (!have_nvcc || !have_plan) return std::unexpected("real_nvcc= and plan= are required");
  return c;
}

std::string to_json_line(const CallRecord& r) {
  json j = {{"tool", r.tool},
            {"kind", call_kind_name(r.kind)},
            {"choice", arch_choice_name(r.choice)},
            {"asked", targets_json(r.asked)},
            {"sources", r.sources},
            {"output", r.output},
            {"cwd", r.cwd},
            {"arch_flags", r.arch_flags},
            {"outcome", outcome_name(r.outcome)},
            {"note", r.note}};
  if (r.compiled) j["compiled"] = targets_json(*r.compiled);
  if (r.origin) j["origin"] = {{"file", r.origin->file}, {"line", r.origin->line}, {"text", r.origin->text}};
  if (r.exit_code) j["exit_code"] = *r.exit_code;
  if (!r.printed.empty()) j["printed"] = r.printed;
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::vector<CallRecord> read_call_log(std::string_view text, std::size_t max_records) {
  std::vector<CallRecord> out;
  while (!text.empty() && out.size() < max_records) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const json j = json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    const auto str = [&j](const char* key) {
      return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    const auto strings = [&j](const char* key) {
      std::vector<std::string> v;
      if (j.contains(key) && j[key].is_array())
        for (const auto& s : j[key])
          if (s.is_string()) v.push_back(s.get<std::string>());
      return v;
    };
    CallRecord r;
    r.tool = str("tool");
    r.kind = by_name<CallKind>(str("kind"), k_kinds, call_kind_name).value_or(CallKind::query);
    r.choice = by_name<ArchChoice>(str("choice"), k_choices, arch_choice_name).value_or(ArchChoice::listed);
    const auto outcome = by_name<Outcome>(str("outcome"), k_outcomes, outcome_name);
    if (r.tool.empty() || !outcome) continue;
    r.outcome = *outcome;
    if (j.contains("asked") && j["asked"].is_object()) r.asked = targets_from(j["asked"]);
    if (j.contains("compiled") && j["compiled"].is_object()) r.compiled = targets_from(j["compiled"]);
    r.sources = strings("sources");
    r.output = str("output");
    r.cwd = str("cwd");
    r.arch_flags = strings("arch_flags");
    r.note = str("note");
    r.printed = str("printed");
    if (j.contains("exit_code") && j["exit_code"].is_number_integer()) r.exit_code = j["exit_code"].get<int>();
    if (j.contains("origin") && j["origin"].is_object()) {
      const json& o = j["origin"];
      Origin origin;
      if (o.contains("file") && o["file"].is_string()) origin.file = o["file"].get<std::string>();
      if (o.contains("line") && o["line"].is_number_integer()) origin.line = o["line"].get<int>();
      if (o.contains("text") && o["text"].is_string()) origin.text = o["text"].get<std::string>();
      r.origin = origin;
    }
    out.push_back(std::move(r));
  }
  return out;
}

bool cmake_probe(const NvccCall& call, const std::filesystem::path& cwd) {
  const auto in_cmake_files = [](std::string_view p) {
    return p.find("/CMakeFiles/") != std::string_view::npos || p.starts_with("CMakeFiles/");
  };
  if (in_cmake_files(cwd.string() + "/")) return true;
  return std::ranges::any_of(call.inputs, [&](const std::string& f) {
    return in_cmake_files(f) || f.ends_with("CMakeCUDACompilerId.cu") || f.ends_with("CMakeCUDACompilerABI.cu");
  });
}

std::vector<std::string> plan_gencode(const arch::ArchSet& plan) { return flags::nvcc_gencode(plan); }

Decision decide(const FrontConfig& config, std::span<const std::string> args, const NvccCall& call,
                const CallContext& context) {
  Decision d;
  CallRecord& r = d.record;
  r.kind = call.kind;
  r.choice = call.choice;
  r.sources = call.sources;
  r.output = call.output;
  r.cwd = context.cwd.string();
  r.arch_flags = call.arch_flags;
  const bool judged = call.kind == CallKind::compile || call.kind == CallKind::device_link ||
                      (call.kind == CallKind::link && !call.arch_flags.empty());
  if (!judged || cmake_probe(call, context.cwd)) {
    r.outcome = Outcome::not_judged;
    r.note = judged ? "CMake's own compiler check" : std::string(call_kind_name(call.kind));
    return d;
  }
  switch (call.choice) {
    case ArchChoice::listed:
      r.asked = call.targets;
      break;
    case ArchChoice::nvcc_default:
      r.asked = default_targets(config.default_arch);
      break;
    default:
      r.asked = context.dryrun.value_or(Targets{});
      break;
  }
  if (matches(r.asked, config.plan) && call.problems.empty()) {
    r.outcome = Outcome::as_planned;
    r.compiled = r.asked;
    return d;
  }
  NvccCall located = call;
  located.targets = r.asked;
  r.origin = find_arch_origin(config.source, located);
  const std::string tier_plan = config.tier + "'s plan (" + plan_text(config.plan) + ")";
  if (config.policy == Policy::enforce) {
    r.outcome = Outcome::enforced;
    r.compiled = Targets{.code = config.plan, .lto = {}};
    d.action = Decision::Action::run_rewritten;
    d.argv = strip_arch_options(args);
    for (auto& g : plan_gencode(config.plan)) d.argv.push_back(std::move(g));
    r.note = "asked " + describe(r.asked) + " by " + how_asked(call, config) + "; compiled for " + tier_plan;
    return d;
  }
  r.outcome = Outcome::refused;
  d.action = Decision::Action::refuse;
  const std::string where = r.origin ? r.origin->file + ":" + std::to_string(r.origin->line) + ": " : "";
  d.message.push_back("orchestrate: error: " + where + "nvcc was asked to compile " +
                      what_was_compiled(call, config.source) + " for " + describe(r.asked) + ", not for " + tier_plan);
  std::string cause = "orchestrate: note: the project chose them by " + how_asked(call, config);
  if (!call.problems.empty()) cause += "; nvcc cannot read " + join_names(call.problems);
  d.message.push_back(cause);
  if (r.origin) d.message.push_back("orchestrate: note: it sets them here: " + r.origin->str());
  // A makefile's recursive variable runs its probe at every use: each
  // distinct probe and answer is said once.
  std::vector<std::string> probes_said;
  for (const auto& p : context.probes) {
    std::string line = "orchestrate: note: the project probed the build machine's GPU first: " + probe_words(p);
    if (std::ranges::find(probes_said, line) == probes_said.end()) probes_said.push_back(std::move(line));
  }
  d.message.insert(d.message.end(), probes_said.begin(), probes_said.end());
  if (const std::string diff = difference(r.asked, config.plan); !diff.empty())
    d.message.push_back("orchestrate: note: " + diff);
  const std::string recipe =
      "recipe '" + config.recipe + "'" + (config.recipe_where.empty() ? "" : " (" + config.recipe_where + ")");
  std::string fix =
      "orchestrate: fix: add `nvcc: enforce` to " + recipe + " to compile every nvcc call for the plan's archs";
  if (r.origin && r.origin->text.find("CUDA_ARCHITECTURES") != std::string::npos)
    fix += ", or set the project's value only if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)";
  else if (r.origin)
    fix += ", or let that line take its archs from the build's variables";
  d.message.push_back(fix);
  // The report repeats the message under its own "error:", so without the
  // program's prefix and the first line's "error: ".
  for (const auto& line : d.message) {
    std::string_view text = line;
    if (text.starts_with("orchestrate: ")) text.remove_prefix(13);
    if (r.note.empty() && text.starts_with("error: ")) text.remove_prefix(7);
    r.note += (r.note.empty() ? "" : "\n") + std::string(text);
  }
  return d;
}

}  // namespace orc::front
