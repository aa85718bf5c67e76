// `orchestrate smoke`, rendered: the run's result as text, or as one JSON
// document with the attestations and the sets it used.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "orchestrator/cli/render.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"

namespace orc::cli {

namespace {

using nlohmann::json;
using namespace smoke;

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

json load_json(const LoadObservation& load) {
  json j{{"outcome", load_outcome_name(load.outcome)},
         {"cu_result", load.cu_result},
         {"error", load.error_name.empty() ? json(nullptr) : json(load.error_name)},
         {"load_ms", load.load_ms},
         {"jit_ms", load.jit_ms},
         {"binary_version", load.signals.binary_version},
         {"ptx_version", load.signals.ptx_version}};
  if (!load.error_log.empty()) j["error_log"] = load.error_log;
  return j;
}

json kernel_json(const KernelResult& k) {
  return {{"name", k.name},           {"status", kernel_status_name(k.status)},
          {"detail", k.detail},       {"compiled_for", k.compiled_for},
          {"checked", k.checked},     {"wrong", k.wrong},
          {"max_error", k.max_error}, {"median_us", k.median_us}};
}

json gpu_json(const GpuResult& g) {
  json j{{"ordinal", g.ordinal},
         {"name", g.name},
         {"cc", g.cc.dotted()},
         {"cc_known", g.cc_known},
         {"multiprocessors", g.multiprocessors},
         {"passed", g.passed()},
         {"load", g.load ? load_json(*g.load) : json(nullptr)},
         {"kernels", json::array()},
         {"artifacts", json::array()},
         {"notes", g.notes}};
  for (const auto& k : g.kernels) j["kernels"].push_back(kernel_json(k));
  for (const auto& a : g.artifacts)
    j["artifacts"].push_back({{"where", util::utf8_escaped(a.where)},
                              {"size", a.size},
                              {"predicted", a.predicted},
                              {"agrees", a.agrees()},
                              {"kernels", a.kernels},
                              {"relinked", a.relinked},
                              {"load", load_json(a.load)}});
  return j;
}

std::string kernel_line(const KernelResult& k) {
  std::string line = "    " + k.name;
  line.resize(std::max<std::size_t>(line.size(), 14), ' ');
  line += std::string(kernel_status_name(k.status));
  line.resize(std::max<std::size_t>(line.size(), 23), ' ');
  if (k.status == KernelStatus::passed)
    line += fixed(k.median_us, 1) + " us  (" + std::to_string(k.checked) + " values, max error " +
            fixed(k.max_error, 7) + ", code for " + std::to_string(k.compiled_for) + ")";
  else
    line += k.detail;
  return line + "\n";
}

// The result's own keys, sorted (nlohmann's json object), as `smoke --json`
// has always printed them.
json smoke_result_json(const SmokeResult& r) {
  json j{{"tier", r.tier.empty() ? json(nullptr) : json(r.tier)},
         {"fatbin", r.fatbin.empty() ? json(nullptr) : json(util::utf8_escaped(r.fatbin))},
         {"fatbin_sha256", r.fatbin_sha256.empty() ? json(nullptr) : json(r.fatbin_sha256)},
         {"driver",
          {{"version", r.driver_version.empty() ? json(nullptr) : json(r.driver_version)},
           {"cuda", r.driver_cuda_version ? json(cuda_version_text(r.driver_cuda_version)) : json(nullptr)},
           {"error", r.driver_error ? json(*r.driver_error) : json(nullptr)}}},
         {"seed", r.seed},
         {"passed", r.exit_code() == util::ExitCode::ok},
         {"gpus", json::array()}};
  for (const auto& g : r.gpus) j["gpus"].push_back(gpu_json(g));
  return j;
}

}  // namespace

std::string render_smoke_text(const smoke::SmokeResult& r) {
  std::string out;
  if (r.driver_error) return "smoke: " + *r.driver_error + "\n";
  out += "driver " + (r.driver_version.empty() ? std::string("(version unknown)") : r.driver_version) + ", CUDA " +
         cuda_version_text(r.driver_cuda_version) + "\n";
  if (!r.fatbin.empty()) out += "kernels: " + util::printable(r.fatbin) + "\n";
  for (const auto& g : r.gpus) {
    out += "GPU " + std::to_string(g.ordinal) + ": " + g.name + " (CC " + g.cc.dotted() +
           (g.cc_known ? "" : ", unknown to the GPU tables") + ")\n";
    for (const auto& n : g.notes) out += "  note: " + n + "\n";
    if (g.load) {
      const LoadObservation& l = *g.load;
      out += "  load: " + std::string(load_outcome_name(l.outcome));
      if (l.outcome == LoadOutcome::jit) out += " (JIT " + fixed(l.jit_ms, 1) + " ms, cache disabled)";
      if (!l.error_name.empty()) out += " (" + l.error_name + ")";
      out += ", " + fixed(l.load_ms, 1) + " ms\n";
    }
    for (const auto& k : g.kernels) out += kernel_line(k);
    for (const auto& a : g.artifacts) {
      out += "  " + util::printable(a.where) + ": " + std::string(load_outcome_name(a.load.outcome));
      if (!a.load.error_name.empty()) out += " (" + a.load.error_name + ")";
      out += a.agrees() ? "" : "  [inspect predicted " + a.predicted + "]";
      if (!a.kernels) out += "  (no kernel entry point: does not decide)";
      if (a.relinked)
        out +=
            "  (predicted, not loaded here: the runtime links __nv_relfatbin's images for this GPU instead; does not "
            "decide)";
      out += "\n";
    }
  }
  out += r.exit_code() == util::ExitCode::ok ? "smoke: passed\n" : "smoke: FAILED\n";
  return out;
}

namespace {

std::string smoke_json(const app::SmokeOutput& output) {
  // Converted in its sorted key order; attestations and sets follow.
  nlohmann::ordered_json j(smoke_result_json(output.result));
  j["attestations"] = output.attestations;
  auto sets = nlohmann::ordered_json::array();
  for (const auto& used : output.current_sets) {
    nlohmann::ordered_json u{{"recipe", used.recipe}, {"set", used.set.to_string()}, {"recorded", used.recorded}};
    if (used.newer) u["newer"] = used.newer->to_string();
    if (used.stale) u["stale_record"] = used.stale->to_string();
    sets.push_back(std::move(u));
  }
  j["current_sets"] = std::move(sets);
  // Names went through utf8_escaped; replacing is the net for what did not.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string smoke_text(const app::SmokeOutput& output) {
  std::string text = render_smoke_text(output.result);
  for (const auto& used : output.current_sets) text += "set: " + app::describe_current(used, output.result.tier) + "\n";
  for (const auto& a : output.attestations) text += "attested: " + a + "\n";
  return text;
}

}  // namespace

std::string render_smoke_json(const smoke::SmokeResult& result) {
  return smoke_result_json(result).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

void emit(Io& io, const app::SmokeOutput& output, Format format) {
  const smoke::SmokeResult& r = output.result;
  if (format == Format::json) io.out << smoke_json(output);
  if (r.driver_error)
    io.err << util::Diagnostic{.message = *r.driver_error + ": nothing can be proven on this machine"}.render();
  else if (r.gpus.empty())
    io.err << util::Diagnostic{.message = "no CUDA GPU on this machine: nothing can be proven here"}.render();
  else if (format == Format::text)
    io.out << smoke_text(output);
  io.exit_code = r.exit_code();
}

}  // namespace orc::cli
