#include "orchestrator/smoke/result.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "orchestrator/smoke/driver_api.hpp"
#include "orchestrator/util/escape.hpp"

namespace orc::smoke {

namespace {

using nlohmann::json;

constexpr std::string_view k_attestation_type = "orchestrate.smoke.v1";

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

}  // namespace

std::string_view load_outcome_name(LoadOutcome o) {
  switch (o) {
    case LoadOutcome::native:
      return "native";
    case LoadOutcome::jit:
      return "jit";
    case LoadOutcome::none:
      return "none";
    case LoadOutcome::error:
      return "error";
  }
  return "error";
}

bool info_log_shows_jit(std::string_view info_log) {
  return info_log.find("ptxas") != std::string_view::npos || info_log.find("Compiling entry") != std::string_view::npos;
}

LoadOutcome classify_load(int cu_result, const JitSignals& signals) {
  if (cu_result == cu::k_error_no_binary_for_gpu) return LoadOutcome::none;
  if (cu_result != cu::k_success) return LoadOutcome::error;
  if (signals.ptx_version > 0 && signals.binary_version > 0 && signals.ptx_version < signals.binary_version)
    return LoadOutcome::jit;
  return info_log_shows_jit(signals.info_log) ? LoadOutcome::jit : LoadOutcome::native;
}

bool ArtifactLoad::agrees() const { return predicted == load_outcome_name(load.outcome); }

bool GpuResult::passed() const {
  if (load && (load->outcome == LoadOutcome::none || load->outcome == LoadOutcome::error)) return false;
  if (std::ranges::any_of(kernels, [](const KernelResult& k) {
        return k.status == KernelStatus::failed || k.status == KernelStatus::error;
      }))
    return false;
  return std::ranges::none_of(artifacts, [](const ArtifactLoad& a) {
    return a.kernels && !a.relinked && (a.load.outcome == LoadOutcome::none || a.load.outcome == LoadOutcome::error);
  });
}

util::ExitCode SmokeResult::exit_code() const {
  using util::ExitCode;
  if (driver_error || gpus.empty()) return ExitCode::outside_failure;
  return std::ranges::all_of(gpus, [](const GpuResult& g) { return g.passed(); }) ? ExitCode::ok
                                                                                  : ExitCode::check_failed;
}

std::string cuda_version_text(int v) {
  if (v <= 0) return "unknown";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string render_smoke_json(const SmokeResult& r) {
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
  // Names went through utf8_escaped; replacing is the net for what did not.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_smoke_text(const SmokeResult& r) {
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

std::string smoke_attestation_json(const SmokeResult& r, std::string_view artifact_digest,
                                   std::string_view created_utc) {
  json gpus = json::array();
  for (const auto& g : r.gpus) {
    json counts{{"passed", 0}, {"failed", 0}, {"skipped", 0}, {"error", 0}};
    double kernel_us = 0;
    for (const auto& k : g.kernels) {
      counts[std::string(kernel_status_name(k.status))] =
          counts[std::string(kernel_status_name(k.status))].get<int>() + 1;
      kernel_us += k.median_us;
    }
    gpus.push_back({{"name", g.name},
                    {"cc", g.cc.dotted()},
                    {"outcome", g.load ? std::string(load_outcome_name(g.load->outcome)) : std::string("not run")},
                    {"jit_ms", g.load ? g.load->jit_ms : 0.0},
                    {"kernels", counts},
                    {"kernel_us", kernel_us},
                    {"artifact_fatbins", g.artifacts.size()},
                    {"passed", g.passed()}});
  }
  // nlohmann's json object keeps keys sorted, so dump() is canonical.
  const json j{{"type", k_attestation_type},
               {"subject", artifact_digest},
               {"tier", r.tier},
               {"driver", r.driver_version},
               {"cuda", cuda_version_text(r.driver_cuda_version)},
               {"kernels_sha256", r.fatbin_sha256},
               {"gpus", gpus},
               {"passed", r.exit_code() == util::ExitCode::ok},
               {"created", created_utc}};
  return j.dump();
}

}  // namespace orc::smoke
