#include "orchestrator/smoke/result.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "orchestrator/smoke/driver_api.hpp"

namespace orc::smoke {

namespace {

using nlohmann::json;

constexpr std::string_view k_attestation_type = "orchestrate.smoke.v1";

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
